"""``openstack iothrottle ...``: the python-openstackclient plugin of the
operator API (``openstack.cli.extension`` entry point ``iothrottle``)."""
