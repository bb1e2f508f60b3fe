#!/bin/bash
#
# Runs iothrottle's devstack plugin the way devstack does, against
# devstack's own function library, in a sandbox:
#
#   devstack_run.sh stack|unstack|clean
#
# "stack" runs stack.sh's plugin phases (install, post-config, extra)
# and, between post-config and extra, devstack's own start_nova_compute
# (which writes nova-cpu.conf from nova.conf); "unstack" and "clean" run
# the phases of unstack.sh and clean.sh.  Each is a process of its own,
# as devstack's three scripts are.
#
# Environment: IOTHROTTLE_TEST_DEVSTACK (a devstack tree, read only),
# IOTHROTTLE_TEST_REPO (this repository), IOTHROTTLE_TEST_SANDBOX (an
# empty directory: configuration files, systemd units, the stubs),
# IOTHROTTLE_TEST_CALLS (where the stubs record their calls) and
# ENABLED_SERVICES; any devstack or plugin variable may be set too.

set -o errexit

mode=$1
TOP_DIR=$IOTHROTTLE_TEST_DEVSTACK
SANDBOX=$IOTHROTTLE_TEST_SANDBOX
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# What reaches outside is a stub (tests/unit/devstack/stub) first on
# PATH; devstack's pip and the iothrottle scripts are in its virtualenv.
DEVSTACK_VENV=$SANDBOX/venv
mkdir -p "$SANDBOX/bin" "$DEVSTACK_VENV/bin" "$IOTHROTTLE_TEST_CALLS"
for command in sudo systemctl openstack mysql uwsgi curl; do
    ln -sf "$here/stub" "$SANDBOX/bin/$command"
done
for command in pip iothrottle-manage; do
    ln -sf "$here/stub" "$DEVSTACK_VENV/bin/$command"
done
export PATH=$SANDBOX/bin:$PATH

# The host, as stack.sh would have found it (no lsb_release, no ip).
export os_VENDOR=Debian os_RELEASE=12 os_PACKAGE=deb os_CODENAME=bookworm
export DISTRO=bookworm
HOST_IP=${HOST_IP:-192.0.2.10}
SERVICE_HOST=${SERVICE_HOST:-192.0.2.10}
GLOBAL_VENV=True
export DEVSTACK_VENV

# devstack's defaults (stackrc sources functions), then the sandbox.
source $TOP_DIR/stackrc
DEST=$SANDBOX/opt/stack
DATA_DIR=$DEST/data
SYSTEMD_DIR=$SANDBOX/systemd
SYSTEMCTL=systemctl
REQUIREMENTS_DIR=
STACK_USER=$(whoami)
SERVICE_PASSWORD=${SERVICE_PASSWORD:-service-secret}
DATABASE_PASSWORD=${DATABASE_PASSWORD:-database-secret}
RABBIT_PASSWORD=${RABBIT_PASSWORD:-rabbit-secret}
ADMIN_PASSWORD=${ADMIN_PASSWORD:-admin-secret}

# The libraries stack.sh sources before the plugin phases.
source $TOP_DIR/lib/apache
source $TOP_DIR/lib/database
source $TOP_DIR/lib/rpc_backend
source $TOP_DIR/lib/keystone
source $TOP_DIR/lib/nova
source $TOP_DIR/lib/cinder
initialize_database_backends && define_database_baseurl

# Nova's and Cinder's configuration files, in the sandbox.
NOVA_CONF_DIR=$SANDBOX/etc/nova
NOVA_CONF=$NOVA_CONF_DIR/nova.conf
NOVA_CPU_CONF=$NOVA_CONF_DIR/nova-cpu.conf
CINDER_CONF_DIR=$SANDBOX/etc/cinder
CINDER_CONF=$CINDER_CONF_DIR/cinder.conf
mkdir -p $NOVA_CONF_DIR $CINDER_CONF_DIR
touch $NOVA_CONF $CINDER_CONF

# local.conf's disable_service (before the plugin's settings, as in
# stack.sh).
if [[ -n "${IOTHROTTLE_TEST_DISABLED:-}" ]]; then
    disable_service $IOTHROTTLE_TEST_DISABLED
fi

# The plugin, as enable_plugin and load_plugin_settings find it; its
# configuration directory in the sandbox.
IOTHROTTLE_DIR=$IOTHROTTLE_TEST_REPO
source $IOTHROTTLE_TEST_REPO/devstack/settings
IOTHROTTLE_CONF_DIR=$SANDBOX/etc/iothrottle
IOTHROTTLE_CONF=$IOTHROTTLE_CONF_DIR/iothrottle.conf
IOTHROTTLE_UWSGI_CONF=$IOTHROTTLE_CONF_DIR/iothrottle-api-uwsgi.ini
plugin=$IOTHROTTLE_TEST_REPO/devstack/plugin.sh

case $mode in
    stack)
        source $plugin stack install
        source $plugin stack post-config
        if is_service_enabled n-cpu; then
            # stack.sh: start_nova, which writes nova-cpu.conf.
            CELLSV2_SETUP=singleconductor
            start_nova_compute
        fi
        source $plugin stack extra
        ;;
    unstack)
        source $plugin unstack
        ;;
    clean)
        source $plugin clean
        ;;
esac
