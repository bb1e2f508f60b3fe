"""Microversions of the API: ``OpenStack-API-Version: iothrottle 1.N``.

The service type is ``iothrottle``, in the catalog and in the header
alike: the API-SIG's microversion guideline has the header name the
service type the catalog lists, and the header of this API is fixed as
``iothrottle 1.x``.  A more generic type (``io-guarantee``) would not
cover what the API also serves (Cinder pool profiles for the seek-model
placement, decisions of every policy, including ``none``), and
``iothrottle`` collides with no entry of the service-types authority.
A request without the header gets the minimum version; ``latest`` the
maximum.
"""

SERVICE_TYPE = 'iothrottle'
MICROVERSION_ENVIRON = '%s.microversion' % SERVICE_TYPE

# Every version, oldest first, and what it added.
VERSIONS = [
    '1.0',  # tiers, flavor guarantees, storage domains, instances,
            # pools and decisions.  Storage domains' load fields
            # (load, saturated, load_iops, load_bytes_sec, load_disks,
            # load_caps, load_at) were added to 1.0 itself, not as 1.1:
            # 1.0 was never released (no tag, no package), so no client
            # can depend on its response without them, and a version
            # that only adds response fields to an unreleased one would
            # be history without a user.  After the first release, a
            # new field is a new microversion.  For the same reason
            # DELETE /tiers/{name}?force=true (and the check of Nova's
            # flavors it skips) is part of 1.0, and so is
            # GET /hosts/{host}/advice.
]


def min_version_string():
    return VERSIONS[0]


def max_version_string():
    return VERSIONS[-1]
