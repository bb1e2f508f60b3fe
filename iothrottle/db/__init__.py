"""The conductor's database: models, migrations and the functions that
read and write it (:mod:`iothrottle.db.api`)."""
