"""Guest images: a Debian kernel and a busybox initramfs with the load
generator and the QEMU guest agent.

:func:`build_images` is idempotent and cached: the result lives in
``<cache_dir>/<key>/`` where ``key`` hashes every input (kernel package,
busybox version, ``loadgen.c``, ``guest_init.sh``, the module list and the
builder's format version). The kernel and ``qemu-guest-agent`` ``.deb``
files are downloaded once with ``apt-get download`` into
``<cache_dir>/debs`` and then reused, which pins them for the measurements
made with a cache.  ``qemu-ga`` is dynamically linked: it goes into the
initramfs with the host's copies of the shared libraries ``ldd`` names
(Debian 12's glib, libudev, libnuma, liburing, libpcre2, libc).
"""

import collections
import fcntl
import glob
import gzip
import hashlib
import io
import json
import logging
import lzma
import os
import shutil
import stat
import subprocess
import tempfile

from iothrottle.testbed import host

LOG = logging.getLogger(__name__)

DEFAULT_CACHE_DIR = '/var/cache/iothrottle/testbed'
KERNEL_META_PACKAGE = 'linux-image-amd64'
QGA_PACKAGE = 'qemu-guest-agent'
QGA_PATH = 'usr/sbin/qemu-ga'
BUSYBOX = '/bin/busybox'

#: Bump when the layout of the built images changes.
FORMAT = 4

#: Modules the guests load, in this order (their dependencies, from
#: modules.dep, are loaded first when missing from the list).
MODULES = (
    'virtio_ring', 'virtio', 'virtio_pci_legacy_dev',
    'virtio_pci_modern_dev', 'virtio_pci', 'virtio_console', 'virtio_blk',
    'virtio_balloon',
)

BUILD_PACKAGES = ('busybox-static', 'gcc', 'libc6-dev', 'kmod')

_HERE = os.path.dirname(os.path.abspath(__file__))
LOADGEN_SOURCE = os.path.join(_HERE, 'loadgen.c')
GUEST_INIT = os.path.join(_HERE, 'guest_init.sh')

GuestImages = collections.namedtuple(
    'GuestImages', 'kernel initrd loadgen kernel_version key directory')


class ImageError(RuntimeError):
    pass


def warn_untraversable(path):
    """Log a warning when a parent of ``path`` is not searchable by others
    (the qemu user could not reach what is below)."""
    parent = os.path.dirname(os.path.abspath(path))
    while parent and parent != '/':
        if not os.stat(parent).st_mode & 0o001:
            LOG.warning('%s is not searchable by others: the qemu user '
                        'cannot reach %s', parent, path)
            return False
        parent = os.path.dirname(parent)
    return True


def _read(path):
    with open(path, 'rb') as f:
        return f.read()


def _pkg_version(pkg):
    return subprocess.run(
        ['dpkg-query', '-W', '-f=${Version}', pkg], check=True,
        stdout=subprocess.PIPE, text=True).stdout.strip()


def _kernel_package_name():
    """Name of the kernel image package linux-image-amd64 depends on."""
    for attempt in range(2):
        proc = subprocess.run(['apt-cache', 'depends', KERNEL_META_PACKAGE],
                              stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
        for line in proc.stdout.splitlines():
            line = line.strip()
            if line.startswith('Depends:') and 'linux-image-' in line:
                return line.split()[1]
        host.apt_update_once()
    raise ImageError('cannot resolve %s with apt-cache' % KERNEL_META_PACKAGE)


def _kernel_deb(cache_dir):
    """Path of the cached kernel .deb (downloaded on first use)."""
    return _cached_deb(cache_dir, 'linux-image-*-amd64_*.deb',
                       _kernel_package_name)


def _qga_deb(cache_dir):
    """Path of the cached qemu-guest-agent .deb (downloaded on first use)."""
    return _cached_deb(cache_dir, QGA_PACKAGE + '_*.deb',
                       lambda: QGA_PACKAGE)


def _cached_deb(cache_dir, pattern, package_name):
    debs = os.path.join(cache_dir, 'debs')
    os.makedirs(debs, exist_ok=True)
    found = sorted(glob.glob(os.path.join(debs, pattern)))
    if found:
        return found[-1]
    name = package_name()
    LOG.info('downloading %s', name)
    with tempfile.TemporaryDirectory(dir=debs) as tmp:
        # _apt cannot write to a root-only temporary directory.
        os.chmod(tmp, 0o755)
        cmd = ['apt-get', 'download', name]
        try:
            subprocess.run(cmd, cwd=tmp, check=True, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        except subprocess.CalledProcessError:
            host.apt_update_once()
            subprocess.run(cmd, cwd=tmp, check=True, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        got = glob.glob(os.path.join(tmp, '*.deb'))
        if len(got) != 1:
            raise ImageError('apt-get download %s gave %s' % (name, got))
        dest = os.path.join(debs, os.path.basename(got[0]))
        os.rename(got[0], dest)
    return dest


def _inputs_key(kernel_deb, qga_deb):
    h = hashlib.sha256()
    for part in (
            'format=%d' % FORMAT,
            'kernel=%s' % os.path.basename(kernel_deb),
            'qga=%s' % os.path.basename(qga_deb),
            'busybox=%s' % _pkg_version('busybox-static'),
            'modules=%s' % ','.join(MODULES)):
        h.update(part.encode() + b'\0')
    h.update(_read(LOADGEN_SOURCE) + b'\0')
    h.update(_read(GUEST_INIT) + b'\0')
    return h.hexdigest()[:16]


# --------------------------------------------------------------------------
# cpio (newc)

class CpioWriter(object):
    """Minimal writer of ``cpio -H newc`` archives (what initramfs eats)."""

    def __init__(self):
        self._buf = io.BytesIO()
        self._ino = 300000

    def _entry(self, name, mode, data=b'', rdev=(0, 0), nlink=1):
        self._ino += 1
        name_b = name.encode() + b'\0'
        fields = (self._ino, mode, 0, 0, nlink, 0, len(data), 0, 0,
                  rdev[0], rdev[1], len(name_b), 0)
        hdr = b'070701' + b''.join(b'%08X' % v for v in fields)
        self._buf.write(hdr + name_b)
        self._pad()
        self._buf.write(data)
        self._pad()

    def _pad(self):
        self._buf.write(b'\0' * (-self._buf.tell() % 4))

    def directory(self, name, mode=0o755):
        self._entry(name, stat.S_IFDIR | mode, nlink=2)

    def file(self, name, data, mode=0o644):
        self._entry(name, stat.S_IFREG | mode, data)

    def symlink(self, name, target):
        self._entry(name, stat.S_IFLNK | 0o777, target.encode())

    def chardev(self, name, major, minor, mode=0o600):
        self._entry(name, stat.S_IFCHR | mode, rdev=(major, minor))

    def finish(self):
        self._entry('TRAILER!!!', 0)
        return self._buf.getvalue()


# --------------------------------------------------------------------------
# Modules

def _module_order(moddir, wanted):
    """Relative paths of the modules to insmod for ``wanted``, in order."""
    dep_file = os.path.join(moddir, 'modules.dep')
    deps, by_name = {}, {}
    with open(dep_file) as f:
        for line in f:
            path, _, rest = line.partition(':')
            deps[path] = rest.split()
            base = os.path.basename(path).split('.ko')[0]
            by_name[base.replace('-', '_')] = path
    builtin = set()
    builtin_file = os.path.join(moddir, 'modules.builtin')
    if os.path.exists(builtin_file):
        with open(builtin_file) as f:
            for line in f:
                base = os.path.basename(line.strip()).split('.ko')[0]
                builtin.add(base.replace('-', '_'))
    order = []

    def visit(path):
        if path in order:
            return
        # modules.dep lists the full dependency closure, deepest last.
        for dep in reversed(deps.get(path, [])):
            visit(dep)
        order.append(path)

    for name in wanted:
        if name in builtin:
            LOG.debug('module %s is built in', name)
            continue
        if name not in by_name:
            raise ImageError('kernel has no module %s' % name)
        visit(by_name[name])
    return order


def _module_bytes(path):
    data = _read(path)
    if path.endswith('.xz'):
        return lzma.decompress(data)
    if path.endswith('.zst'):
        return subprocess.run(['zstd', '-dc', path], check=True,
                              stdout=subprocess.PIPE).stdout
    if path.endswith('.gz'):
        return gzip.decompress(data)
    return data


# --------------------------------------------------------------------------

def _compile_loadgen(out):
    subprocess.run(['gcc', '-O2', '-static', '-Wall', '-o', out,
                    LOADGEN_SOURCE], check=True, stdout=subprocess.PIPE,
                   stderr=subprocess.STDOUT)


def shared_libraries(binary):
    """Absolute paths of the shared libraries ``binary`` needs (``ldd``),
    the dynamic loader included; raises ImageError for a missing one."""
    out = subprocess.run(['ldd', binary], check=True, stdout=subprocess.PIPE,
                         text=True).stdout
    libs = []
    for line in out.splitlines():
        line = line.strip()
        if 'not found' in line:
            raise ImageError('%s needs %s, which this host lacks (install '
                             'the package that has it)' % (binary, line))
        path = line.split('=>')[-1].split('(')[0].strip()
        if path.startswith('/'):
            libs.append(path)
    return libs


def _add_guest_agent(cpio, qga_deb):
    """qemu-ga and its shared libraries, at the paths ldd resolved."""
    with tempfile.TemporaryDirectory(prefix='itb-qga-') as tree:
        subprocess.run(['dpkg-deb', '-x', qga_deb, tree], check=True)
        binary = os.path.join(tree, QGA_PATH)
        cpio.file(QGA_PATH, _read(binary), 0o755)
        made = set()
        for lib in shared_libraries(binary):
            parts = lib.strip('/').split('/')
            for i in range(1, len(parts)):
                d = '/'.join(parts[:i])
                if d not in made:
                    made.add(d)
                    cpio.directory(d)
            cpio.file('/'.join(parts), _read(os.path.realpath(lib)), 0o755)


def _build(kernel_deb, qga_deb, dest):
    with tempfile.TemporaryDirectory(prefix='itb-kernel-') as tree:
        subprocess.run(['dpkg-deb', '-x', kernel_deb, tree], check=True)
        vmlinuz = glob.glob(os.path.join(tree, 'boot', 'vmlinuz-*'))
        if len(vmlinuz) != 1:
            raise ImageError('no single vmlinuz in %s' % kernel_deb)
        kver = os.path.basename(vmlinuz[0])[len('vmlinuz-'):]
        moddir = os.path.join(tree, 'lib', 'modules', kver)
        subprocess.run(['depmod', '-b', tree, kver], check=True)
        modules = _module_order(moddir, MODULES)

        loadgen = os.path.join(dest, 'loadgen')
        _compile_loadgen(loadgen)

        cpio = CpioWriter()
        for d in ('bin', 'dev', 'etc', 'lib', 'lib/modules', 'proc', 'sys',
                  'tmp', 'run', 'root', 'usr', 'usr/sbin'):
            cpio.directory(d)
        cpio.chardev('dev/console', 5, 1)
        cpio.chardev('dev/null', 1, 3, 0o666)
        cpio.chardev('dev/ttyS0', 4, 64)
        cpio.file('bin/busybox', _read(BUSYBOX), 0o755)
        cpio.symlink('bin/sh', 'busybox')
        cpio.file('bin/loadgen', _read(loadgen), 0o755)
        cpio.file('init', _read(GUEST_INIT), 0o755)
        _add_guest_agent(cpio, qga_deb)
        names = []
        for rel in modules:
            base = os.path.basename(rel).split('.ko')[0]
            names.append(base)
            cpio.file('lib/modules/%s.ko' % base,
                      _module_bytes(os.path.join(moddir, rel)))
        cpio.file('etc/modules.order', ('\n'.join(names) + '\n').encode())
        initrd = os.path.join(dest, 'initrd.img')
        with open(initrd, 'wb') as f:
            f.write(gzip.compress(cpio.finish(), compresslevel=6, mtime=0))
        shutil.copyfile(vmlinuz[0], os.path.join(dest, 'vmlinuz'))
    return kver, names


def build_images(cache_dir=DEFAULT_CACHE_DIR, install=True):
    """Build (or find in ``cache_dir``) the guest kernel and initramfs.

    Returns a :class:`GuestImages` of absolute paths. Installs the build
    packages it misses when ``install`` is true. Safe to call from several
    processes at once (a lock file serialises builders).
    """
    cache_dir = os.path.abspath(cache_dir)
    os.makedirs(cache_dir, mode=0o755, exist_ok=True)
    # qemu (libvirt-qemu) must reach the kernel and initrd.
    os.chmod(cache_dir, 0o755)
    warn_untraversable(cache_dir)
    if install:
        host.ensure_packages(BUILD_PACKAGES)
    with open(os.path.join(cache_dir, '.lock'), 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        kernel_deb = _kernel_deb(cache_dir)
        qga_deb = _qga_deb(cache_dir)
        key = _inputs_key(kernel_deb, qga_deb)
        final = os.path.join(cache_dir, key)
        manifest = os.path.join(final, 'manifest.json')
        if not os.path.exists(manifest):
            LOG.info('building guest images %s', key)
            tmp = tempfile.mkdtemp(prefix='.build-', dir=cache_dir)
            try:
                kver, mods = _build(kernel_deb, qga_deb, tmp)
                with open(os.path.join(tmp, 'manifest.json'), 'w') as f:
                    json.dump({'key': key, 'kernel_version': kver,
                               'kernel_deb': os.path.basename(kernel_deb),
                               'qga_deb': os.path.basename(qga_deb),
                               'modules': mods}, f, indent=1)
                for name in os.listdir(tmp):
                    os.chmod(os.path.join(tmp, name), 0o644)
                os.chmod(os.path.join(tmp, 'loadgen'), 0o755)
                os.chmod(tmp, 0o755)
                os.rename(tmp, final)
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
        with open(manifest) as f:
            info = json.load(f)
    return GuestImages(kernel=os.path.join(final, 'vmlinuz'),
                       initrd=os.path.join(final, 'initrd.img'),
                       loadgen=os.path.join(final, 'loadgen'),
                       kernel_version=info['kernel_version'], key=key,
                       directory=final)
