"""One module per resource of the API; :mod:`iothrottle.api.handler`
routes to them."""
