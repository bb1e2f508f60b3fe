#!/bin/busybox sh
# /init of the iothrottle testbed guests (busybox sh, PID 1).
#
# Mounts proc/sys/dev, loads the virtio modules listed in /etc/modules.order
# (in that order), starts the QEMU guest agent (qemu-ga) on the
# org.qemu.guest_agent.0 virtio-serial port when the domain has that
# channel, prints a ready marker on the serial console, then serves
# one command per line read from the serial console. The host reaches the
# console through libvirt's unix socket (see iothrottle/testbed/domains.py).
#
# Protocol (host -> guest, one line each; SEQ is chosen by the host):
#   ping SEQ            -> ITB-OK SEQ
#   run SEQ ARGS...     start "loadgen ARGS..." in the background
#                       -> ITB-OK SEQ PID
#   stop SEQ            SIGTERM every load generator and wait for them
#                       -> ITB-OK SEQ
#   sh SEQ CMD...       run CMD (sh -c) to completion
#                       -> ITB-OUT SEQ line... then ITB-OK SEQ RC
#   other               -> ITB-ERR SEQ unknown-command
# Guest -> host, unsolicited: "ITB-READY key=value..." once booted, or
# "ITB-FAIL reason" when the disk did not appear.
# Lines that do not start with "ITB-" are kernel or boot noise.

/bin/busybox mkdir -p /proc /sys /dev /tmp /run /usr/bin /usr/sbin /sbin
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run

CONSOLE=/dev/ttyS0
[ -c "$CONSOLE" ] || CONSOLE=/dev/console
exec 0<"$CONSOLE" 1>"$CONSOLE" 2>&1
stty -echo 2>/dev/null

while read -r mod; do
    [ -n "$mod" ] || continue
    insmod "/lib/modules/$mod.ko" || echo "itb: insmod $mod failed"
done < /etc/modules.order

i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do
    usleep 100000
    i=$((i + 1))
done
# No udev here: find the agent's port by its name in sysfs (udev would
# make the /dev/virtio-ports/org.qemu.guest_agent.0 link).
QGA=none
for port in /sys/class/virtio-ports/*; do
    [ "$(cat "$port/name" 2>/dev/null)" = org.qemu.guest_agent.0 ] || continue
    dev=/dev/$(basename "$port")
    mkdir -p /var/run /run/qga
    /usr/sbin/qemu-ga -m virtio-serial -p "$dev" -t /run/qga \
        -f /run/qga/qga.pid </dev/null >/tmp/qga.log 2>&1 &
    QGA=$dev
done
# Quiet the kernel now that boot messages are logged: command replies
# must not be interleaved with printk output.
echo 1 > /proc/sys/kernel/printk

LOADS=""
if [ -b /dev/vda ]; then
    echo "ITB-READY uptime=$(cut -d' ' -f1 /proc/uptime) vda=$(cat /sys/block/vda/size) qga=$QGA"
else
    echo "ITB-FAIL no-vda uptime=$(cut -d' ' -f1 /proc/uptime)"
fi

while true; do
    if ! IFS= read -r line; then
        usleep 100000
        continue
    fi
    set -f
    # shellcheck disable=SC2086
    set -- $line
    set +f
    cmd=$1
    seq=$2
    [ $# -ge 2 ] && shift 2 || shift $#
    case "$cmd" in
    ping)
        echo "ITB-OK $seq"
        ;;
    run)
        /bin/loadgen "$@" </dev/null >/tmp/loadgen.$seq.log 2>&1 &
        LOADS="$LOADS $!"
        echo "ITB-OK $seq $!"
        ;;
    stop)
        for p in $LOADS; do kill -TERM "$p" 2>/dev/null; done
        for p in $LOADS; do wait "$p" 2>/dev/null; done
        LOADS=""
        echo "ITB-OK $seq"
        ;;
    sh)
        sh -c "$*" </dev/null >/tmp/sh.out 2>&1
        rc=$?
        while IFS= read -r out; do
            echo "ITB-OUT $seq $out"
        done </tmp/sh.out
        echo "ITB-OK $seq $rc"
        ;;
    "")
        ;;
    *)
        echo "ITB-ERR $seq unknown-command"
        ;;
    esac
done
