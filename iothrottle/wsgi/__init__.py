"""WSGI applications for uwsgi, gunicorn or mod_wsgi."""
