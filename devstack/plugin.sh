#!/bin/bash
#
# devstack/plugin.sh: iothrottle in devstack (``enable_plugin iothrottle
# <repo>`` in local.conf; doc/deploy.rst).  devstack sources this file
# with its mode and phase:
#
# - stack install:     install iothrottle beside Nova and Cinder
# - stack post-config: iothrottle.conf, the hooks in nova.conf and
#                      cinder.conf, the uwsgi file of the API; the
#                      database (recreated, migrated) and the catalog
# - stack extra:       start the services; seed example tiers, flavors
# - unstack:           stop the services
# - clean:             remove the API's uwsgi and Apache files and
#                      iothrottle's configuration directory
#
# Names and defaults are in devstack/settings.

# Save trace setting
_XTRACE_IOTHROTTLE=$(set +o | grep xtrace)
set -o xtrace


# Functions
# ---------

# The comma-separated list $1 with $2 at its end, unless already in it.
function _iothrottle_list_with {
    local list=$1
    local item=$2
    if [[ ,$list, == *,$item,* ]]; then
        echo "$list"
    elif [[ -z "$list" ]]; then
        echo "$item"
    else
        echo "$list,$item"
    fi
}

# The comma-separated list $1 without the items that start with $2.
function _iothrottle_list_without_prefix {
    local item
    local kept=""
    for item in ${1//,/ }; do
        if [[ "$item" != "$2"* ]]; then
            kept=$(_iothrottle_list_with "$kept" "$item")
        fi
    done
    echo "$kept"
}

# True if this node runs the conductor or the API: both use the
# database, the service user and its Nova credentials.
function _iothrottle_is_controller {
    is_service_enabled iothrottle-conductor iothrottle-api
}

# install_iothrottle() - the package, beside Nova and Cinder
function install_iothrottle {
    setup_develop $IOTHROTTLE_DIR
}

# configure_iothrottle() - iothrottle.conf
function configure_iothrottle {
    sudo install -d -o $STACK_USER $IOTHROTTLE_CONF_DIR
    rm -f $IOTHROTTLE_CONF
    iniset $IOTHROTTLE_CONF DEFAULT debug "$ENABLE_DEBUG_LOG_LEVEL"
    # The message bus of conductor and agents: devstack's RabbitMQ.
    iniset_rpc_backend iothrottle $IOTHROTTLE_CONF DEFAULT
    setup_logging $IOTHROTTLE_CONF
    if _iothrottle_is_controller; then
        iniset $IOTHROTTLE_CONF database connection \
            "$(database_connection_url $IOTHROTTLE_DB_NAME)"
        # The conductor reads each instance's host and flavor from Nova
        # ([conductor] guarantees = nova, the default); the API reads
        # flavors.  Admin credentials of the iothrottle service user.
        configure_keystoneauth $IOTHROTTLE_CONF iothrottle nova
        iniset $IOTHROTTLE_CONF nova region_name "$REGION_NAME"
        if is_service_enabled c-vol; then
            # The conductor follows Cinder's volumes into their pools:
            # notifications, and its API for the reconciliation.
            iniset $IOTHROTTLE_CONF cinder listen_notifications True
            configure_keystoneauth $IOTHROTTLE_CONF iothrottle cinder
            iniset $IOTHROTTLE_CONF cinder region_name "$REGION_NAME"
        fi
    fi
    if is_service_enabled iothrottle-api; then
        configure_keystone_authtoken_middleware $IOTHROTTLE_CONF iothrottle
        write_uwsgi_config "$IOTHROTTLE_UWSGI_CONF" "$IOTHROTTLE_API_WSGI" \
            "$IOTHROTTLE_API_URL_PATH" "" "$IOTHROTTLE_API_SITE"
        iniset $IOTHROTTLE_UWSGI_CONF uwsgi env \
            "$IOTHROTTLE_API_CONFIG_ENV=$IOTHROTTLE_CONF"
    fi
}

# configure_iothrottle_nova() - the compute agent inside nova-compute
function configure_iothrottle_nova {
    if ! is_service_enabled iothrottle-compute; then
        return
    fi
    if [[ "$IOTHROTTLE_AGENT_MODE" != "monitor" ]]; then
        return
    fi
    if ! is_service_enabled n-cpu; then
        # settings enables iothrottle-compute everywhere; a node without
        # nova-compute has no guests to watch.
        local why="no n-cpu on this node, so no agent inside nova-compute"
        warn $LINENO "iothrottle-compute: $why"
        return
    fi
    # devstack writes nova-cpu.conf when it starts nova-compute, as a
    # copy of nova.conf (lib/nova, start_nova_compute): the monitor set
    # here reaches nova-cpu.conf that way.  Nova enables one "cpu."
    # monitor, and cpu.iothrottle includes cpu.virt_driver's metrics.
    # The monitor reads its own options from /etc/iothrottle/
    # iothrottle.conf ($IOTHROTTLE_CONF), not from nova.conf.
    local monitors
    monitors=$(iniget $NOVA_CONF DEFAULT compute_monitors)
    monitors=$(_iothrottle_list_without_prefix "$monitors" cpu.)
    iniset $NOVA_CONF DEFAULT compute_monitors \
        "$(_iothrottle_list_with "$monitors" cpu.iothrottle)"
}

# configure_iothrottle_cinder() - the seek-model filter and weigher
function configure_iothrottle_cinder {
    if [[ "$IOTHROTTLE_CINDER_SCHEDULER" != "True" ]]; then
        return
    fi
    if ! is_service_enabled c-sch; then
        return
    fi
    local filters weighers
    filters=$(iniget $CINDER_CONF DEFAULT scheduler_default_filters)
    filters=${filters:-$IOTHROTTLE_CINDER_DEFAULT_FILTERS}
    weighers=$(iniget $CINDER_CONF DEFAULT scheduler_default_weighers)
    weighers=${weighers:-$IOTHROTTLE_CINDER_DEFAULT_WEIGHERS}
    iniset $CINDER_CONF DEFAULT scheduler_default_filters \
        "$(_iothrottle_list_with "$filters" SeekModelFilter)"
    iniset $CINDER_CONF DEFAULT scheduler_default_weighers \
        "$(_iothrottle_list_with "$weighers" SeekModelWeigher)"
    # The conductor's bus (the plugins would otherwise use Cinder's).
    iniset $CINDER_CONF iothrottle_cinder transport_url "$(get_transport_url)"
}

# configure_iothrottle_cinder_notifications() - Cinder tells the
# conductor about its volumes (devstack sets this driver only for
# ceilometer)
function configure_iothrottle_cinder_notifications {
    if ! is_service_enabled c-vol; then
        return
    fi
    iniset $CINDER_CONF oslo_messaging_notifications driver messagingv2
}

# create_iothrottle_accounts() - service user and catalog entry
function create_iothrottle_accounts {
    if ! _iothrottle_is_controller; then
        return
    fi
    # admin: the conductor lists every project's servers on a host.
    create_service_user "iothrottle" "admin"
    if is_service_enabled iothrottle-api; then
        get_or_create_service "$IOTHROTTLE_API_SERVICE_NAME" \
            "$IOTHROTTLE_API_SERVICE_TYPE" "iothrottle I/O guarantees"
        get_or_create_endpoint "$IOTHROTTLE_API_SERVICE_TYPE" \
            "$REGION_NAME" \
            "$SERVICE_PROTOCOL://$SERVICE_HOST$IOTHROTTLE_API_URL_PATH"
    fi
}

# init_iothrottle() - the database, recreated and migrated
function init_iothrottle {
    if ! is_service_enabled iothrottle-conductor; then
        return
    fi
    recreate_database $IOTHROTTLE_DB_NAME
    $IOTHROTTLE_BIN_DIR/iothrottle-manage --config-file $IOTHROTTLE_CONF \
        db sync
}

# start_iothrottle() - the services of this node
function start_iothrottle {
    local config="--config-file $IOTHROTTLE_CONF"
    run_process iothrottle-conductor \
        "$IOTHROTTLE_BIN_DIR/iothrottle-conductor $config"
    if [[ "$IOTHROTTLE_AGENT_MODE" == "process" ]]; then
        # libvirt's group: the agent reads and sets the guests' limits.
        run_process iothrottle-compute \
            "$IOTHROTTLE_BIN_DIR/iothrottle-compute $config" $LIBVIRT_GROUP
    fi
    if is_service_enabled iothrottle-api; then
        local uwsgi
        uwsgi="$(which uwsgi) --procname-prefix iothrottle-api"
        run_process iothrottle-api "$uwsgi --ini $IOTHROTTLE_UWSGI_CONF"
        local url=$SERVICE_PROTOCOL://$SERVICE_HOST$IOTHROTTLE_API_URL_PATH
        echo "Waiting for iothrottle-api to start..."
        if ! wait_for_service $SERVICE_TIMEOUT $url; then
            die $LINENO "iothrottle-api did not start"
        fi
    fi
}

# seed_iothrottle_tiers() - example tiers in the conductor's database
function seed_iothrottle_tiers {
    local manage="$IOTHROTTLE_BIN_DIR/iothrottle-manage"
    manage+=" --config-file $IOTHROTTLE_CONF"
    # name, then iothrottle-manage tier create's options (bytes/s, MiB)
    local tiers=(
        "bronze --min-iops 20 --min-bytes-sec 1048576 --weight 1"
        "silver --min-iops 100 --min-bytes-sec 5242880 --weight 2"
        "gold --min-iops 200 --min-bytes-sec 10485760 --weight 4
            --min-memory-mb 256"
    )
    local tier
    for tier in "${tiers[@]}"; do
        if ! $manage tier list | grep -q "^${tier%% *} "; then
            $manage tier create $tier
        fi
    done
}

# seed_iothrottle_flavors() - example flavors with iothrottle: extra specs
function seed_iothrottle_flavors {
    # name, then the flavor's iothrottle: extra specs
    local flavors=(
        "io.bronze iothrottle:tier=bronze"
        "io.silver iothrottle:tier=silver"
        "io.gold iothrottle:tier=gold"
        "io.custom iothrottle:min_iops=50 iothrottle:max_iops=500
            iothrottle:weight=2"
    )
    local flavor name spec
    for flavor in "${flavors[@]}"; do
        name=${flavor%% *}
        if ! openstack --os-region-name="$REGION_NAME" flavor show $name \
                >/dev/null 2>&1; then
            openstack --os-region-name="$REGION_NAME" flavor create \
                --ram 512 --disk 1 --vcpus 1 $name
        fi
        for spec in ${flavor#* }; do
            openstack --os-region-name="$REGION_NAME" flavor set \
                --property $spec $name
        done
    done
}

# stop_iothrottle() - stop the services of this node
function stop_iothrottle {
    local service
    for service in iothrottle-api iothrottle-conductor iothrottle-compute; do
        stop_process $service
    done
}

# cleanup_iothrottle() - what stack left outside the database
function cleanup_iothrottle {
    sudo rm -f $(apache_site_config_for $IOTHROTTLE_API_SITE)
    remove_uwsgi_config "$IOTHROTTLE_UWSGI_CONF" "$IOTHROTTLE_API_SITE"
    sudo rm -rf $IOTHROTTLE_CONF_DIR
}


# Phases
# ------

if [[ "$1" == "stack" && "$2" == "install" ]]; then
    echo_summary "Installing iothrottle"
    install_iothrottle
elif [[ "$1" == "stack" && "$2" == "post-config" ]]; then
    echo_summary "Configuring iothrottle"
    configure_iothrottle
    configure_iothrottle_nova
    configure_iothrottle_cinder
    configure_iothrottle_cinder_notifications
    create_iothrottle_accounts
    init_iothrottle
elif [[ "$1" == "stack" && "$2" == "extra" ]]; then
    echo_summary "Starting iothrottle"
    start_iothrottle
    if [[ "$IOTHROTTLE_SEED_EXAMPLES" == "True" ]]; then
        if is_service_enabled iothrottle-conductor; then
            seed_iothrottle_tiers
        fi
        if is_service_enabled n-api; then
            seed_iothrottle_flavors
        fi
    fi
fi

if [[ "$1" == "unstack" ]]; then
    stop_iothrottle
fi

if [[ "$1" == "clean" ]]; then
    cleanup_iothrottle
fi

# Restore xtrace
$_XTRACE_IOTHROTTLE
