"""Guest domains: Nova-like domain XML and the serial-console control link.

The domain XML carries the same ``<nova:instance>`` metadata Nova writes,
so the compute agent treats testbed guests exactly like Nova instances,
plus one ``<itb:testbed prefix=.../>`` element naming the testbed that owns
the domain (used to clean up after a killed run without touching anybody
else's domains).

The host controls a guest through its serial console, which libvirt
exposes as a unix socket (``<serial type='unix'><source mode='bind'>``).
See ``guest_init.sh`` for the line protocol.
"""

import collections
import errno
import socket
import threading
import time
from xml.sax import saxutils

NOVA_NS = 'http://openstack.org/xmlns/libvirt/nova/1.1'
TESTBED_NS = 'https://iothrottle.invalid/xmlns/testbed/1'

KERNEL_CMDLINE = 'console=ttyS0 panic=-1 mitigations=off'


def _e(value):
    return saxutils.escape(str(value))


def _a(value):
    return saxutils.quoteattr(str(value))


def nbd_disk_xml(socket_path, export):
    """The guest disk over NBD straight to the store (no host block
    layer: no host I/O scheduler sees its requests)."""
    return """    <disk type='network' device='disk'>
      <driver name='qemu' type='raw' cache='none'/>
      <source protocol='nbd' name={export}>
        <host transport='unix' socket={socket}/>
      </source>
      <target dev='vda' bus='virtio'/>
    </disk>
""".format(export=_a(export), socket=_a(socket_path))


def block_disk_xml(dev, readonly=False):
    """The guest disk on a host block device (the block-layer testbed):
    ``cache='none' io='native'``, as seed 002 recommends, so QEMU submits
    O_DIRECT AIO and the host's scheduler sees each guest request."""
    return """    <disk type='block' device='disk'>
      <driver name='qemu' type='raw' cache='none' io='native'/>
      <source dev={dev}/>
      <target dev='vda' bus='virtio'/>{readonly}
    </disk>
""".format(dev=_a(dev), readonly='\n      <readonly/>' if readonly else '')


def domain_xml(name, uuid, spec, images, store, export, console_path,
               console_log, prefix, creation_time=None,
               machine='pc', emulator='/usr/bin/qemu-system-x86_64',
               disk=None):
    """Domain XML for one guest (a TCG ``qemu`` domain).

    Like a Nova instance of an image with ``hw_qemu_guest_agent=yes``, it
    has the ``org.qemu.guest_agent.0`` virtio-serial channel (libvirt
    picks the socket path).  ``<memory>`` is the flavor memory, the
    balloon's ceiling; ``<currentMemory>`` (``spec.current_memory_mb``)
    may start lower, as an overcommitted host would have it.
    ``disk`` is the ``<disk>`` element (:func:`block_disk_xml`); by
    default the NBD export ``export`` of ``store``.
    """
    if disk is None:
        disk = nbd_disk_xml(store.socket, export)
    if creation_time is None:
        creation_time = time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())
    return '''<domain type='qemu'>
  <name>{name}</name>
  <uuid>{uuid}</uuid>
  <metadata>
    <nova:instance xmlns:nova="{nova_ns}">
      <nova:package version="34.0.0"/>
      <nova:name>{vm}</nova:name>
      <nova:creationTime>{ctime}</nova:creationTime>
      <nova:flavor name={flavor}>
        <nova:memory>{memory}</nova:memory>
        <nova:disk>{disk_gb}</nova:disk>
        <nova:swap>0</nova:swap>
        <nova:ephemeral>0</nova:ephemeral>
        <nova:vcpus>{vcpus}</nova:vcpus>
      </nova:flavor>
      <nova:owner>
        <nova:user uuid={user_id}>{user}</nova:user>
        <nova:project uuid={project_id}>{project}</nova:project>
      </nova:owner>
    </nova:instance>
    <itb:testbed xmlns:itb="{itb_ns}" prefix={prefix} guest={vm_attr}/>
  </metadata>
  <memory unit='MiB'>{memory}</memory>
  <currentMemory unit='MiB'>{current_memory}</currentMemory>
  <vcpu placement='static'>{vcpus}</vcpu>
  <os>
    <type arch='x86_64' machine='{machine}'>hvm</type>
    <kernel>{kernel}</kernel>
    <initrd>{initrd}</initrd>
    <cmdline>{cmdline}</cmdline>
  </os>
  <features><acpi/></features>
  <clock offset='utc'/>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>destroy</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <emulator>{emulator}</emulator>
{disk}    <serial type='unix'>
      <source mode='bind' path={console}/>
      <log file={console_log} append='off'/>
      <target port='0'/>
    </serial>
    <channel type='unix'>
      <target type='virtio' name='org.qemu.guest_agent.0'/>
    </channel>
    <memballoon model='virtio'>
      <stats period='2'/>
    </memballoon>
  </devices>
</domain>
'''.format(
        name=_e(name), uuid=_e(uuid), nova_ns=NOVA_NS, itb_ns=TESTBED_NS,
        vm=_e(spec.name), vm_attr=_a(spec.name), ctime=_e(creation_time),
        flavor=_a(spec.flavor or 'bench.%s' % spec.name),
        memory=int(spec.memory_mb),
        current_memory=int(spec.current_memory_mb or spec.memory_mb),
        disk_gb=max(1, -(-int(spec.disk_mb) // 1024)),
        vcpus=int(spec.vcpus), user_id=_a(spec.user_id), user=_e(spec.user),
        project_id=_a(spec.project_id), project=_e(spec.project),
        prefix=_a(prefix), machine=machine, kernel=_e(images.kernel),
        initrd=_e(images.initrd), cmdline=_e(KERNEL_CMDLINE),
        emulator=_e(emulator), disk=disk, console=_a(console_path),
        console_log=_a(console_log))


def testbed_prefix_of(dom):
    """The testbed prefix recorded in a domain's metadata, or None.

    Reads the persistent XML (not virDomainGetMetadata, whose "not found"
    error libvirt's default handler prints for every foreign domain).
    """
    import libvirt
    from xml.etree import ElementTree
    try:
        xml = dom.XMLDesc(libvirt.VIR_DOMAIN_XML_INACTIVE)
        root = ElementTree.fromstring(xml)
    except (libvirt.libvirtError, ElementTree.ParseError):
        return None
    el = root.find('metadata/{%s}testbed' % TESTBED_NS)
    return None if el is None else el.get('prefix')


# --------------------------------------------------------------------------
# Serial console link

class GuestError(RuntimeError):
    """A guest did not boot or did not answer."""


Reply = collections.namedtuple('Reply', 'seq fields output')


class GuestConsole(object):
    """Line protocol over a guest's serial console unix socket.

    Only one client can be connected to a console at a time (QEMU accepts
    one); a :class:`~iothrottle.testbed.Testbed` keeps its connection for
    its whole life.
    """

    def __init__(self, path, name='guest'):
        self.path = path
        self.name = name
        self._sock = None
        self._buf = b''
        self._seq = int(time.time() * 1000) % 1000000
        self._lock = threading.Lock()
        self.noise = collections.deque(maxlen=40)
        self.ready_info = None

    # -- connection
    def connect(self, timeout=10.0):
        deadline = time.monotonic() + timeout
        while True:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.connect(self.path)
                self._sock = sock
                return
            except OSError as exc:
                sock.close()
                if exc.errno not in (errno.ENOENT, errno.ECONNREFUSED) or \
                        time.monotonic() > deadline:
                    raise GuestError('%s: cannot connect to console %s: %s'
                                     % (self.name, self.path, exc))
                time.sleep(0.05)

    def close(self):
        if self._sock is not None:
            try:
                self._sock.close()
            finally:
                self._sock = None

    def _send(self, line):
        self._sock.sendall(line.encode() + b'\n')

    def _readline(self, deadline):
        """Next line, or None at the deadline. Raises GuestError on EOF."""
        while b'\n' not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self._sock.settimeout(left)
            try:
                data = self._sock.recv(4096)
            except socket.timeout:
                return None
            if not data:
                raise GuestError('%s: console closed (guest stopped?); last '
                                 'output:\n%s' % (self.name, self.tail()))
            self._buf += data
        line, _, self._buf = self._buf.partition(b'\n')
        return line.decode(errors='replace').strip('\r\0 ')

    def tail(self):
        return '\n'.join(self.noise)

    def _next_seq(self):
        self._seq += 1
        return self._seq

    # -- protocol
    def wait_ready(self, timeout=120.0, ping_every=2.0, alive=None):
        """Block until the guest's command loop runs; return its READY info.

        Reads the console until ``ITB-READY`` or until a ``ping`` (sent
        every ``ping_every`` s, for a host that connected after the marker
        went by) is answered. ``alive()``, when given, is polled and must
        stay true (the domain is running). Raises :class:`GuestError` at
        the deadline, on ``ITB-FAIL`` or when the guest dies.
        """
        deadline = time.monotonic() + timeout
        next_ping = time.monotonic() + ping_every
        next_alive = 0.0 if alive is not None else float('inf')
        pings = set()
        while True:
            now = time.monotonic()
            if now > deadline:
                raise GuestError('%s: not ready within %.1f s; last console '
                                 'output:\n%s' % (self.name, timeout,
                                                  self.tail()))
            if alive is not None and now >= next_alive:
                next_alive = now + 0.5
                if not alive():
                    raise GuestError('%s: domain stopped (or boot aborted) '
                                     'before it was ready; last console '
                                     'output:\n%s' % (self.name, self.tail()))
            if now >= next_ping:
                seq = self._next_seq()
                pings.add(str(seq))
                self._send('ping %d' % seq)
                next_ping = now + ping_every
            line = self._readline(min(deadline, next_ping, next_alive))
            if line is None:
                continue
            if line.startswith('ITB-READY'):
                self.ready_info = dict(
                    kv.split('=', 1) for kv in line.split()[1:] if '=' in kv)
                return self.ready_info
            if line.startswith('ITB-FAIL'):
                raise GuestError('%s: %s\n%s' % (self.name, line,
                                                 self.tail()))
            parts = line.split()
            if parts[:1] in (['ITB-OK'], ['ITB-ERR']) and \
                    len(parts) > 1 and parts[1] in pings:
                self.ready_info = self.ready_info or {}
                return self.ready_info
            if not line.startswith('ITB-'):
                self.noise.append(line)

    def command(self, cmd, *args, timeout=30.0):
        """Send ``cmd SEQ args...``; return its :class:`Reply`.

        Raises :class:`GuestError` on ``ITB-ERR`` or when no reply comes
        within ``timeout`` s.
        """
        for arg in args:
            if any(c in str(arg) for c in '\n\r'):
                raise ValueError('newline in console argument %r' % (arg,))
        with self._lock:
            seq = str(self._next_seq())
            self._send(' '.join([cmd, seq] + [str(a) for a in args]))
            deadline = time.monotonic() + timeout
            output = []
            while True:
                line = self._readline(deadline)
                if line is None:
                    raise GuestError('%s: no reply to %r within %.0f s'
                                     % (self.name, cmd, timeout))
                parts = line.split(' ', 2)
                if len(parts) >= 2 and parts[1] == seq:
                    if parts[0] == 'ITB-OUT':
                        output.append(parts[2] if len(parts) > 2 else '')
                        continue
                    if parts[0] == 'ITB-OK':
                        fields = parts[2].split() if len(parts) > 2 else []
                        return Reply(seq, fields, output)
                    if parts[0] == 'ITB-ERR':
                        raise GuestError('%s: %r failed: %s'
                                         % (self.name, cmd, line))
                if not line.startswith('ITB-'):
                    self.noise.append(line)
