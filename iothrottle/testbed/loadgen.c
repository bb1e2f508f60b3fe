/*
 * loadgen: a tiny fio-like block load generator for the iothrottle testbed.
 *
 * Runs inside the test guests (built with gcc -O2 -static at image build
 * time). Worker processes issue synchronous requests of one block size on
 * a block device (O_DIRECT by default) inside an offset range, optionally
 * paced to a per-process rate. The process set can ramp up: start with P
 * processes and add one every T seconds up to a maximum.
 *
 * Pacing is by absolute deadlines (start + k * interval). A worker that
 * falls behind (the store was slow) does not catch up in a burst: when it
 * is more than --burst slots late it drops the missed slots and restarts
 * its schedule from now. So a paced process never issues more than
 * (burst + 1) requests back to back above its rate.
 *
 * The paced processes started together are spread over one slot: process
 * i of the -p starts its schedule (-F + i * -G) slots late, by default
 * i / P. Started in phase, P processes of one rate complete P requests
 * at once, so a window of the host's shows P too many or too few of
 * them by where it falls; spread, it shows one at most (the scenario
 * bench's whole-request rounding, iothrottle/bench/scenarios.py, counts
 * on that). Two loadgens of one guest (a read and a write stream) are
 * spread by the caller's -F and -G. Processes added by -T start when
 * they are added.
 *
 * Nothing the tests depend on is printed: the host measures throughput
 * from libvirt's block statistics. Errors go to stderr.
 *
 * Mode "files" (seed 004's load generator): the range is cut into "files"
 * of one block each (-b 256k); each access picks a file - with
 * probability -A percent one of the first -H percent ("hot titles"),
 * otherwise one of the rest, so -H 20 -A 20 is uniform - and reads all of
 * it with buffered 4 KiB reads, through the guest's page cache.  Before
 * each read it asks mincore() which of the file's pages are cached: the
 * ground truth of read hits.  Every second (and at exit) each worker
 * rewrites "-S PATH.<worker>" with "accesses= app_bytes= hit_pages=
 * pages=" (cumulative), for the host to check its cache estimators.
 *
 * The parent puts itself and its workers in a new process group; SIGTERM
 * or SIGINT to the parent (or the end of --duration) stops all workers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/fs.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_PROCS 256
#define NSEC 1000000000LL

struct opts {
    const char *device;
    int procs;
    int max_procs;
    double ramp_s;
    long long block;
    int random;
    int write;
    int direct;
    long long offset;
    long long size;
    double rate_iops;
    double rate_bps;
    double duration_s;
    int burst;
    double phase_first;     /* slots process 0's schedule starts late */
    double phase_step;      /* slots between processes; -1: 1 / procs */
    int files;          /* mode "files" */
    int hot_title_pct;
    int hot_access_pct;
    const char *stats;
};

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * NSEC + ts.tv_nsec;
}

static void sleep_until(long long t)
{
    struct timespec ts = { .tv_sec = t / NSEC, .tv_nsec = t % NSEC };
    while (!stop_flag &&
           clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

static uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

static long long parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    switch (*end) {
    case 'k': case 'K': v *= 1024; break;
    case 'm': case 'M': v *= 1024 * 1024; break;
    case 'g': case 'G': v *= 1024.0 * 1024 * 1024; break;
    case '\0': break;
    default:
        fprintf(stderr, "loadgen: bad size '%s'\n", s);
        exit(2);
    }
    return (long long)v;
}

static void usage(void)
{
    fprintf(stderr,
        "usage: loadgen [options]\n"
        "  -f DEV      block device or file (default /dev/vda)\n"
        "  -p N        processes at start (default 1)\n"
        "  -P N        maximum processes when ramping (default = -p)\n"
        "  -T SECS     add one process every SECS seconds up to -P\n"
        "  -b SIZE     block size, suffix k/m (default 64k)\n"
        "  -m MODE     randread|randwrite|read|write (default randwrite)\n"
        "  -o SIZE     start of the offset range (default 0)\n"
        "  -s SIZE     length of the offset range (default: to the end)\n"
        "  -r IOPS     per-process rate limit in requests/s (0: none)\n"
        "  -B SIZE     per-process rate limit in bytes/s (0: none)\n"
        "  -t SECS     duration (default 0: until stopped)\n"
        "  -n BURST    slots a late process may still catch up (default 1)\n"
        "  -F SLOTS    paced: process 0 starts SLOTS of a slot late (default 0)\n"
        "  -G SLOTS    paced: each next process SLOTS later (default 1/-p)\n"
        "  -D          buffered I/O (default O_DIRECT)\n"
        "  -m files    seed 004 reads of whole blocks ('files'), buffered\n"
        "  -H PCT      files mode: hot title ratio, percent (default 20)\n"
        "  -A PCT      files mode: hot access ratio, percent (default 80)\n"
        "  -S PATH     files mode: stats file prefix (default none)\n");
    exit(2);
}

struct file_stats {
    long long accesses, app_bytes, hit_pages, pages;
};

static void write_stats(const char *prefix, int index,
                        const struct file_stats *fs)
{
    char path[512], tmp[520];
    if (!prefix)
        return;
    snprintf(path, sizeof(path), "%s.%d", prefix, index);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return;
    fprintf(f, "accesses=%lld app_bytes=%lld hit_pages=%lld pages=%lld\n",
            fs->accesses, fs->app_bytes, fs->hit_pages, fs->pages);
    fclose(f);
    rename(tmp, path);
}

/* One access of mode "files": returns the pages of the file that were
 * cached just before it was read. */
static long long read_file(int fd, off_t off, long long len, char *buf,
                           unsigned char *vec)
{
    long long page = 4096, hits = 0, npages = len / page;
    void *map = mmap(NULL, (size_t)len, PROT_READ, MAP_SHARED, fd, off);
    if (map != MAP_FAILED) {
        if (mincore(map, (size_t)len, vec) == 0)
            for (long long i = 0; i < npages; i++)
                hits += vec[i] & 1;
        munmap(map, (size_t)len);
    }
    for (long long done = 0; done < len; done += page) {
        ssize_t n = pread(fd, buf, (size_t)page, off + done);
        if (n < 0 && errno != EINTR) {
            fprintf(stderr, "loadgen: read at %lld: %s\n",
                    (long long)(off + done), strerror(errno));
            _exit(1);
        }
    }
    return hits;
}

/* Worker ``index``; its pacing schedule counts from ``t0`` (the start of
 * the -p processes, or the moment a -T process is added). */
static void worker(const struct opts *o, int index, long long t0)
{
    int flags = (o->write ? O_WRONLY : O_RDONLY) | (o->direct ? O_DIRECT : 0);
    int fd = open(o->device, flags);
    if (fd < 0) {
        fprintf(stderr, "loadgen: open %s: %s\n", o->device, strerror(errno));
        _exit(1);
    }
    long long dev_size = 0;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISBLK(st.st_mode)) {
        unsigned long long b;
        if (ioctl(fd, BLKGETSIZE64, &b) == 0)
            dev_size = (long long)b;
    } else if (fstat(fd, &st) == 0) {
        dev_size = st.st_size;
    }
    long long size = o->size;
    if (size <= 0 || o->offset + size > dev_size)
        size = dev_size - o->offset;
    long long nblocks = size / o->block;
    if (nblocks <= 0) {
        fprintf(stderr, "loadgen: offset range smaller than one block\n");
        _exit(1);
    }

    void *buf;
    if (posix_memalign(&buf, 4096, (size_t)o->block) != 0)
        _exit(1);
    uint64_t seed = ((uint64_t)getpid() << 32) ^ (uint64_t)now_ns() ^
                    (uint64_t)index * 0x9E3779B97F4A7C15ULL;
    if (!seed)
        seed = 1;
    for (long long i = 0; i < o->block; i += 8) {
        uint64_t v = xorshift(&seed);
        memcpy((char *)buf + i, &v, 8);
    }

    double rate = 0;
    if (o->rate_iops > 0)
        rate = o->rate_iops;
    else if (o->rate_bps > 0)
        rate = o->rate_bps / (double)o->block;
    long long interval = rate > 0 ? (long long)(NSEC / rate) : 0;

    /* Sequential workers start at different places of the range. */
    long long seq = (nblocks / (o->max_procs > 0 ? o->max_procs : 1)) * index;
    long long start = t0;
    if (interval && index < o->procs) {
        double step = o->phase_step >= 0 ? o->phase_step
                                         : 1.0 / (double)o->procs;
        start += (long long)((o->phase_first + index * step) *
                             (double)interval);
    }
    long long k = 0;
    struct file_stats fs = { 0, 0, 0, 0 };
    long long hot = nblocks * o->hot_title_pct / 100;
    long long next_stats = start;
    unsigned char *vec = malloc((size_t)(o->block / 4096 + 1));
    if (o->files && (hot < 1 || hot >= nblocks || !vec)) {
        fprintf(stderr, "loadgen: -H leaves no hot or no cold file\n");
        _exit(1);
    }
    while (!stop_flag) {
        if (interval) {
            long long deadline = start + k * interval;
            long long now = now_ns();
            if (now > deadline + (long long)o->burst * interval) {
                /* Late: drop the missed slots rather than bursting. */
                start = now;
                k = 0;
                deadline = now;
            }
            sleep_until(deadline);
            if (stop_flag)
                break;
            k++;
        }
        long long blk;
        if (o->files) {
            uint64_t r = xorshift(&seed);
            if ((long long)(r % 10000) < o->hot_access_pct * 100LL)
                blk = (long long)((r >> 16) % (uint64_t)hot);
            else
                blk = hot + (long long)((r >> 16) %
                                        (uint64_t)(nblocks - hot));
            off_t off = (off_t)(o->offset + blk * o->block);
            fs.hit_pages += read_file(fd, off, o->block, buf, vec);
            fs.accesses++;
            fs.app_bytes += o->block;
            fs.pages += o->block / 4096;
            if (now_ns() >= next_stats) {
                write_stats(o->stats, index, &fs);
                next_stats = now_ns() + NSEC;
            }
            continue;
        }
        if (o->random) {
            blk = (long long)(xorshift(&seed) % (uint64_t)nblocks);
        } else {
            blk = seq % nblocks;
            seq++;
        }
        off_t off = (off_t)(o->offset + blk * o->block);
        ssize_t n = o->write ? pwrite(fd, buf, (size_t)o->block, off)
                             : pread(fd, buf, (size_t)o->block, off);
        if (n < 0 && errno != EINTR) {
            fprintf(stderr, "loadgen: I/O at %lld: %s\n", (long long)off,
                    strerror(errno));
            _exit(1);
        }
    }
    if (o->files)
        write_stats(o->stats, index, &fs);
    close(fd);
    _exit(0);
}

int main(int argc, char **argv)
{
    struct opts o = {
        .device = "/dev/vda", .procs = 1, .max_procs = 0, .ramp_s = 0,
        .block = 65536, .random = 1, .write = 1, .direct = 1,
        .offset = 0, .size = 0, .rate_iops = 0, .rate_bps = 0,
        .duration_s = 0, .burst = 1, .phase_first = 0, .phase_step = -1,
        .files = 0, .hot_title_pct = 20, .hot_access_pct = 80, .stats = NULL,
    };
    int c;
    while ((c = getopt(argc, argv, "f:p:P:T:b:m:o:s:r:B:t:n:F:G:H:A:S:Dh")) != -1) {
        switch (c) {
        case 'f': o.device = optarg; break;
        case 'p': o.procs = atoi(optarg); break;
        case 'P': o.max_procs = atoi(optarg); break;
        case 'T': o.ramp_s = atof(optarg); break;
        case 'b': o.block = parse_size(optarg); break;
        case 'm':
            if (!strcmp(optarg, "randread")) { o.random = 1; o.write = 0; }
            else if (!strcmp(optarg, "randwrite")) { o.random = 1; o.write = 1; }
            else if (!strcmp(optarg, "read")) { o.random = 0; o.write = 0; }
            else if (!strcmp(optarg, "write")) { o.random = 0; o.write = 1; }
            else if (!strcmp(optarg, "files")) { o.files = 1; o.write = 0; }
            else usage();
            break;
        case 'o': o.offset = parse_size(optarg); break;
        case 's': o.size = parse_size(optarg); break;
        case 'r': o.rate_iops = atof(optarg); break;
        case 'B': o.rate_bps = (double)parse_size(optarg); break;
        case 't': o.duration_s = atof(optarg); break;
        case 'n': o.burst = atoi(optarg); break;
        case 'F': o.phase_first = atof(optarg); break;
        case 'G': o.phase_step = atof(optarg); break;
        case 'D': o.direct = 0; break;
        case 'H': o.hot_title_pct = atoi(optarg); break;
        case 'A': o.hot_access_pct = atoi(optarg); break;
        case 'S': o.stats = optarg; break;
        default: usage();
        }
    }
    if (o.files) {
        o.direct = 0;   /* the point is the page cache */
        if (o.block % 4096 || o.hot_title_pct < 1 || o.hot_title_pct > 99 ||
            o.hot_access_pct < 0 || o.hot_access_pct > 100)
            usage();
    }
    if (o.max_procs < o.procs)
        o.max_procs = o.procs;
    if (o.procs < 0 || o.max_procs < 1 || o.max_procs > MAX_PROCS ||
        o.block <= 0 || (o.direct && o.block % 512) || o.burst < 0)
        usage();
    /* Every process of the -p within one slot: the last one's offset
     * under 1 (a single process has no step to check). */
    if (!(o.phase_first >= 0 && o.phase_first < 1) ||
        (o.phase_step != -1 &&
         !(o.phase_step >= 0 &&
           o.phase_first + (o.procs - 1) * o.phase_step < 1)))
        usage();

    setpgid(0, 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGALRM, &sa, NULL);

    pid_t pids[MAX_PROCS];
    int n = 0;
    long long t0 = now_ns();
    long long end = o.duration_s > 0 ? t0 + (long long)(o.duration_s * NSEC)
                                     : 0;
    while (n < o.procs) {
        pid_t pid = fork();
        if (pid == 0)
            worker(&o, n, t0);
        if (pid < 0) {
            perror("loadgen: fork");
            break;
        }
        pids[n++] = pid;
    }
    long long next = o.ramp_s > 0 ? t0 + (long long)(o.ramp_s * NSEC) : 0;
    while (!stop_flag) {
        long long wake = 0;
        if (next && n < o.max_procs)
            wake = next;
        if (end && (!wake || end < wake))
            wake = end;
        if (!wake) {
            pause();
            continue;
        }
        sleep_until(wake);
        if (stop_flag)
            break;
        long long now = now_ns();
        if (end && now >= end)
            break;
        if (next && now >= next && n < o.max_procs) {
            pid_t pid = fork();
            if (pid == 0)
                worker(&o, n, now);
            if (pid > 0)
                pids[n++] = pid;
            next += (long long)(o.ramp_s * NSEC);
        }
    }
    for (int i = 0; i < n; i++)
        kill(pids[i], SIGTERM);
    for (int i = 0; i < n; i++)
        waitpid(pids[i], NULL, 0);
    return 0;
}
