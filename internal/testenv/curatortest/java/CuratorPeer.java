import java.io.BufferedReader;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.curator.framework.recipes.barriers.DistributedBarrier;
import org.apache.curator.framework.recipes.barriers.DistributedDoubleBarrier;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.framework.recipes.leader.Participant;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMultiLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.framework.recipes.locks.Revoker;
import org.apache.curator.framework.recipes.shared.SharedCount;
import org.apache.curator.retry.ExponentialBackoffRetry;

/**
 * A Curator 5.x peer for zkrecipes' interoperability tests. The first argument
 * is the mode; see usage(). Exit status: 0 on success, 1 on failure (message on
 * stderr), 2 on bad arguments, 3 when barrier-wait times out. Every client is
 * closed before exit, also on SIGTERM (through a shutdown hook), so its
 * ephemeral nodes go at once.
 */
public final class CuratorPeer {
    private static final List<CuratorFramework> CLIENTS = new CopyOnWriteArrayList<>();

    private static final class UsageException extends Exception {
        private static final long serialVersionUID = 1L;

        UsageException(String message) {
            super(message);
        }
    }

    /** Something the caller should see as the result of a mode, with an exit status. */
    private static final class Exit extends Exception {
        private static final long serialVersionUID = 1L;
        final int status;

        Exit(int status, String message) {
            super(message);
            this.status = status;
        }
    }

    /** An acquire and release of one lock kind, for lockLoop. */
    private interface Hold {
        void acquire() throws Exception;

        void release() throws Exception;
    }

    public static void main(String[] args) {
        Runtime.getRuntime().addShutdownHook(new Thread(CuratorPeer::closeAll));
        int status = 0;
        try {
            run(args);
        } catch (UsageException e) {
            System.err.println("CuratorPeer: " + e.getMessage());
            System.err.println(usage());
            status = 2;
        } catch (Exit e) {
            System.err.println("CuratorPeer: " + e.getMessage());
            status = e.status;
        } catch (Throwable e) {
            System.err.println("CuratorPeer " + String.join(" ", args) + ": " + e);
            e.printStackTrace();
            status = 1;
        }
        closeAll();
        System.out.flush();
        System.exit(status);
    }

    private static String usage() {
        return String.join("\n",
                "usage: CuratorPeer [--auth=SCHEME:CREDENTIALS] [--session-ms=N] MODE ARGS...",
                "  --auth authenticates every client and gives the nodes it creates to",
                "  its identity only (Curator's CREATOR_ALL_ACL)",
                "  --session-ms sets the session timeout the clients ask for (default 10000)",
                "  mutex|read|write|semaphore-mutex SERVERS PATH ITER HOLD_MS LOG CLIENT",
                "  multilock SERVERS PATH1,PATH2[,...] ITER HOLD_MS LOG CLIENT",
                "  semaphore SERVERS PATH MAX ITER HOLD_MS LOG CLIENT",
                "  semaphore-count SERVERS PATH COUNTPATH ITER HOLD_MS LOG CLIENT (a SharedCount, seed 1)",
                "  barrier-set|barrier-remove SERVERS PATH",
                "  barrier-wait SERVERS PATH TIMEOUT_MS",
                "  double-barrier SERVERS PATH MEMBERS LOG CLIENT",
                "  revoke SERVERS NODEPATH",
                "  latch|selector SERVERS PATH ITER HOLD_MS LOG CLIENT (CLIENT is the participant id; the leader logs kind E)",
                "  leader SERVERS PATH latch|selector (prints \"leader ID\", or \"none\")",
                "  soak-mutex SERVERS PATHS STORE TIMELINE THREADS HOLD_MS PACE_MS WATCH (see SoakWorker)",
                "  version",
                "  bench-mutex SERVERS PATH CLIENTS SECONDS",
                "  bench-rw SERVERS PATH CLIENTS SECONDS READ_PERCENT",
                "  bench-capacity SERVERS ROOT PATHS CLIENTS SECONDS (a mutex of ROOT/lock-000 ... at random for each acquisition)",
                "  bench-semaphore SERVERS PATH MAX CLIENTS SECONDS",
                "  bench-sessions SERVERS ROOT CLIENTS HOLD (CLIENTS clients, each holding a mutex of ROOT/lock-000 ... if HOLD is 1;",
                "    prints \"ready\" once all are, and closes them at the end of stdin)",
                "  bench-double-barrier SERVERS PATH MEMBERS ROUNDS",
                "  bench-latch-follow SERVERS PATH ID (campaigns once per line of stdin, prints \"leader\" on leading, then resigns)",
                "  bench-latch-handoff SERVERS PATH ROUNDS (prints \"ns=N,N,...\", one per resignation)",
                "  bench-selector-handoff SERVERS PATH ROUNDS (the same with a LeaderSelector)");
    }

    /** SCHEME:CREDENTIALS of --auth, or null: see connect. */
    private static String auth;

    /** The session timeout every client asks for (--session-ms). */
    private static int sessionMs = 10000;

    private static void run(String[] argv) throws Exception {
        while (argv.length > 0 && argv[0].startsWith("--")) {
            if (argv[0].startsWith("--auth=")) {
                auth = argv[0].substring("--auth=".length());
            } else if (argv[0].startsWith("--session-ms=")) {
                sessionMs = num(argv[0].substring("--session-ms=".length()));
            } else {
                throw new UsageException("unknown option " + argv[0]);
            }
            argv = Arrays.copyOfRange(argv, 1, argv.length);
        }
        final String[] a = argv;
        if (a.length == 0) {
            throw new UsageException("no mode");
        }
        switch (a[0]) {
            case "mutex": {
                args(a, 7);
                InterProcessMutex m = new InterProcessMutex(connect(a[1]), a[2]);
                lockLoop(lock(m), a, 3, "M");
                break;
            }
            case "read":
            case "write": {
                args(a, 7);
                InterProcessReadWriteLock rw = new InterProcessReadWriteLock(connect(a[1]), a[2]);
                boolean read = a[0].equals("read");
                lockLoop(lock(read ? rw.readLock() : rw.writeLock()), a, 3, read ? "R" : "W");
                break;
            }
            case "semaphore-mutex": {
                args(a, 7);
                lockLoop(lock(new InterProcessSemaphoreMutex(connect(a[1]), a[2])), a, 3, "M");
                break;
            }
            case "multilock": {
                args(a, 7);
                List<String> paths = Arrays.asList(a[2].split(","));
                lockLoop(lock(new InterProcessMultiLock(connect(a[1]), paths)), a, 3, "M");
                break;
            }
            case "semaphore":
            case "semaphore-count": {
                args(a, 8);
                CuratorFramework client = connect(a[1]);
                InterProcessSemaphoreV2 sem;
                if (a[0].equals("semaphore")) {
                    sem = new InterProcessSemaphoreV2(client, a[2], num(a[3]));
                } else {
                    SharedCount count = new SharedCount(client, a[3], 1);
                    count.start();
                    sem = new InterProcessSemaphoreV2(client, a[2], count);
                }
                AtomicReference<Lease> lease = new AtomicReference<>();
                lockLoop(new Hold() {
                    public void acquire() throws Exception {
                        lease.set(sem.acquire());
                    }

                    public void release() throws Exception {
                        lease.getAndSet(null).close();
                    }
                }, a, 4, "L");
                break;
            }
            case "latch": {
                args(a, 7);
                CuratorFramework client = connect(a[1]);
                AtomicReference<LeaderLatch> latch = new AtomicReference<>();
                lockLoop(new Hold() {
                    public void acquire() throws Exception {
                        LeaderLatch l = new LeaderLatch(client, a[2], a[6]);
                        latch.set(l);
                        l.start();
                        l.await();
                    }

                    public void release() throws Exception {
                        latch.getAndSet(null).close();
                    }
                }, a, 3, "E");
                break;
            }
            case "selector": {
                args(a, 7);
                int iterations = num(a[3]);
                long holdMillis = num(a[4]);
                Semaphore led = new Semaphore(0);
                LeaderSelector s = new LeaderSelector(connect(a[1]), a[2], new LeaderSelectorListenerAdapter() {
                    @Override
                    public void takeLeadership(CuratorFramework c) throws Exception {
                        append(a[5], "+", "E", a[6]);
                        if (holdMillis > 0) {
                            Thread.sleep(holdMillis);
                        }
                        append(a[5], "-", "E", a[6]);
                        led.release();
                    }
                });
                s.setId(a[6]);
                s.start();
                for (int i = 0; i < iterations; i++) {
                    led.acquire();
                    // requeue refuses until the selector has finished with the
                    // term that just ended.
                    while (i + 1 < iterations && !s.requeue()) {
                        Thread.sleep(5);
                    }
                }
                s.close();
                break;
            }
            case "leader": {
                args(a, 4);
                CuratorFramework client = connect(a[1]);
                Participant p;
                if (a[3].equals("latch")) {
                    p = new LeaderLatch(client, a[2]).getLeader();
                } else {
                    p = new LeaderSelector(client, a[2], new LeaderSelectorListenerAdapter() {
                        @Override
                        public void takeLeadership(CuratorFramework c) {
                        }
                    }).getLeader();
                }
                System.out.println(p.isLeader() ? "leader " + p.getId() : "none");
                break;
            }
            case "barrier-set":
                args(a, 3);
                new DistributedBarrier(connect(a[1]), a[2]).setBarrier();
                break;
            case "barrier-remove":
                args(a, 3);
                new DistributedBarrier(connect(a[1]), a[2]).removeBarrier();
                break;
            case "barrier-wait": {
                args(a, 4);
                DistributedBarrier b = new DistributedBarrier(connect(a[1]), a[2]);
                if (!b.waitOnBarrier(num(a[3]), TimeUnit.MILLISECONDS)) {
                    throw new Exit(3, "barrier " + a[2] + " still set after " + a[3] + " ms");
                }
                System.out.println("passed");
                break;
            }
            case "double-barrier": {
                args(a, 6);
                DistributedDoubleBarrier b = new DistributedDoubleBarrier(connect(a[1]), a[2], num(a[3]));
                append(a[4], "+", "A", a[5]); // arrived
                b.enter();
                append(a[4], "+", "B", a[5]);
                append(a[4], "-", "B", a[5]);
                b.leave();
                append(a[4], "+", "D", a[5]); // done leaving
                break;
            }
            case "soak-mutex":
                args(a, 9);
                SoakWorker.run(connect(a[1]), a, num(a[5]), num(a[6]), num(a[7]));
                break;
            case "version":
                args(a, 1);
                System.out.println("curator=" + curatorVersion()
                        + " zookeeper=" + org.apache.zookeeper.Version.getFullVersion().split("[-, ]")[0]);
                break;
            case "revoke":
                args(a, 3);
                Revoker.attemptRevoke(connect(a[1]), a[2]);
                break;
            case "bench-double-barrier":
                args(a, 5);
                benchDoubleBarrier(a[1], a[2], num(a[3]), num(a[4]));
                break;
            case "bench-latch-follow":
                args(a, 4);
                latchFollow(connect(a[1]), a[2], a[3]);
                break;
            case "bench-latch-handoff":
                args(a, 4);
                latchHandoff(a[1], a[2], num(a[3]));
                break;
            case "bench-selector-handoff":
                args(a, 4);
                selectorHandoff(a[1], a[2], num(a[3]));
                break;
            case "bench-mutex":
                args(a, 5);
                bench(a[1], num(a[3]), num(a[4]), c -> lock(new InterProcessMutex(c, a[2])));
                break;
            case "bench-capacity": {
                args(a, 6);
                int paths = num(a[3]);
                bench(a[1], num(a[4]), num(a[5]), c -> {
                    InterProcessMutex[] mutexes = new InterProcessMutex[paths];
                    for (int i = 0; i < paths; i++) {
                        mutexes[i] = new InterProcessMutex(c, String.format("%s/lock-%03d", a[2], i));
                    }
                    return new Hold() {
                        private InterProcessMutex held;

                        public void acquire() throws Exception {
                            held = mutexes[ThreadLocalRandom.current().nextInt(paths)];
                            held.acquire();
                        }

                        public void release() throws Exception {
                            held.release();
                        }
                    };
                });
                break;
            }
            case "bench-sessions":
                args(a, 5);
                sessions(a[1], a[2], num(a[3]), num(a[4]) == 1);
                break;
            case "bench-rw": {
                args(a, 6);
                int readPercent = num(a[5]);
                bench(a[1], num(a[3]), num(a[4]), c -> {
                    InterProcessReadWriteLock rw = new InterProcessReadWriteLock(c, a[2]);
                    Hold read = lock(rw.readLock());
                    Hold write = lock(rw.writeLock());
                    return new Hold() {
                        private Hold held;

                        public void acquire() throws Exception {
                            held = ThreadLocalRandom.current().nextInt(100) < readPercent ? read : write;
                            held.acquire();
                        }

                        public void release() throws Exception {
                            held.release();
                        }
                    };
                });
                break;
            }
            case "bench-semaphore": {
                args(a, 6);
                int max = num(a[3]);
                bench(a[1], num(a[4]), num(a[5]), c -> {
                    InterProcessSemaphoreV2 sem = new InterProcessSemaphoreV2(c, a[2], max);
                    return new Hold() {
                        private Lease lease;

                        public void acquire() throws Exception {
                            lease = sem.acquire();
                        }

                        public void release() throws Exception {
                            lease.close();
                        }
                    };
                });
                break;
            }
            default:
                throw new UsageException("unknown mode " + a[0]);
        }
    }

    /** The version of the curator-recipes jar in use, from its Maven properties. */
    private static String curatorVersion() throws IOException {
        Properties p = new Properties();
        try (InputStream in = InterProcessMutex.class.getResourceAsStream(
                "/META-INF/maven/org.apache.curator/curator-recipes/pom.properties")) {
            if (in == null) {
                return "unknown";
            }
            p.load(in);
        }
        return p.getProperty("version", "unknown");
    }

    private static void args(String[] a, int n) throws UsageException {
        if (a.length != n) {
            throw new UsageException(a[0] + " takes " + (n - 1) + " arguments, got " + (a.length - 1));
        }
    }

    private static int num(String s) throws UsageException {
        try {
            return Integer.parseInt(s);
        } catch (NumberFormatException e) {
            throw new UsageException("not a number: " + s);
        }
    }

    /** Starts a client on servers, waits for its connection and registers it for closing. */
    private static CuratorFramework connect(String servers) throws Exception {
        CuratorFrameworkFactory.Builder b = CuratorFrameworkFactory.builder()
                .connectString(servers)
                .sessionTimeoutMs(sessionMs)
                .connectionTimeoutMs(10000)
                .retryPolicy(new ExponentialBackoffRetry(100, 3));
        if (auth != null) {
            int colon = auth.indexOf(':');
            if (colon < 0) {
                throw new UsageException("--auth wants SCHEME:CREDENTIALS");
            }
            b = b.authorization(auth.substring(0, colon),
                            auth.substring(colon + 1).getBytes(StandardCharsets.UTF_8))
                    .aclProvider(new ACLProvider() {
                        @Override
                        public List<ACL> getDefaultAcl() {
                            return ZooDefs.Ids.CREATOR_ALL_ACL;
                        }

                        @Override
                        public List<ACL> getAclForPath(String path) {
                            return ZooDefs.Ids.CREATOR_ALL_ACL;
                        }
                    });
        }
        CuratorFramework c = b.build();
        CLIENTS.add(c);
        c.start();
        if (!c.blockUntilConnected(30, TimeUnit.SECONDS)) {
            throw new IOException("no connection to " + servers + " within 30s");
        }
        return c;
    }

    private static void closeAll() {
        for (CuratorFramework c : CLIENTS) {
            c.close(); // idempotent
        }
    }

    private static Hold lock(InterProcessLock l) {
        return new Hold() {
            public void acquire() throws Exception {
                l.acquire();
            }

            public void release() throws Exception {
                l.release();
            }
        };
    }

    /** Runs ITER HOLD_MS LOG CLIENT, found at a[from..]: acquire, log, hold, log, release. */
    private static void lockLoop(Hold h, String[] a, int from, String kind) throws Exception {
        int iterations = num(a[from]);
        long holdMillis = num(a[from + 1]);
        String log = a[from + 2];
        String client = a[from + 3];
        for (int i = 0; i < iterations; i++) {
            h.acquire();
            append(log, "+", kind, client);
            if (holdMillis > 0) {
                Thread.sleep(holdMillis);
            }
            append(log, "-", kind, client);
            h.release();
        }
    }

    /** Appends one event line to the log with a single write in append mode. */
    private static void append(String file, String op, String kind, String client) throws IOException {
        byte[] line = (op + " " + kind + " " + client + "\n").getBytes(StandardCharsets.UTF_8);
        try (FileOutputStream out = new FileOutputStream(file, true)) {
            out.write(line);
        }
    }

    private interface HoldFactory {
        Hold make(CuratorFramework c) throws Exception;
    }

    /** How long bench loops before it starts counting, so the JIT is warm. */
    private static final long BENCH_WARM_UP_NANOS = TimeUnit.SECONDS.toNanos(1);

    /**
     * Connects n clients, each with its own lock from f, then loops acquire and
     * release on all of them for a second's warm-up and then the given
     * seconds, and prints what it counted after the warm-up, and in all.
     */
    private static void bench(String servers, int n, int seconds, HoldFactory f) throws Exception {
        List<Hold> holds = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            holds.add(f.make(connect(servers)));
        }
        AtomicLong ops = new AtomicLong();
        AtomicLong all = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(n);
        long start = System.nanoTime() + BENCH_WARM_UP_NANOS;
        long deadline = start + TimeUnit.SECONDS.toNanos(seconds);
        for (Hold h : holds) {
            Thread t = new Thread(() -> {
                try {
                    while (System.nanoTime() < deadline && failure.get() == null) {
                        h.acquire();
                        h.release();
                        all.incrementAndGet();
                        if (System.nanoTime() >= start) {
                            ops.incrementAndGet();
                        }
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                } finally {
                    done.countDown();
                }
            });
            t.setDaemon(true);
            t.start();
        }
        done.await();
        double elapsed = (System.nanoTime() - start) / 1e9;
        if (failure.get() != null) {
            throw new Exception("bench client failed", failure.get());
        }
        System.out.printf("ops=%d seconds=%.3f all=%d%n", ops.get(), elapsed, all.get());
    }

    /**
     * Runs ROUNDS rounds of a double barrier of n members, each on its own
     * client: n-1 members enter and wait; once their nodes are all there the
     * last one enters, and the round's time is from then until every member
     * is through enter. Then all leave. Prints the mean as seconds=.
     */
    private static void benchDoubleBarrier(String servers, String path, int n, int rounds) throws Exception {
        List<CuratorFramework> clients = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            clients.add(connect(servers));
        }
        double total = 0;
        for (int r = 0; r < rounds; r++) {
            List<DistributedDoubleBarrier> members = new ArrayList<>();
            for (CuratorFramework c : clients) {
                members.add(new DistributedDoubleBarrier(c, path, n));
            }
            AtomicLong lastIn = new AtomicLong();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            CountDownLatch in = new CountDownLatch(n);
            CountDownLatch out = new CountDownLatch(n);
            CountDownLatch leave = new CountDownLatch(1);
            for (int i = 0; i < n; i++) {
                DistributedDoubleBarrier m = members.get(i);
                boolean last = i == n - 1;
                Thread t = new Thread(() -> {
                    try {
                        m.enter();
                        lastIn.accumulateAndGet(System.nanoTime(), Math::max);
                        in.countDown();
                        leave.await();
                        m.leave();
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                        in.countDown();
                    } finally {
                        out.countDown();
                    }
                });
                t.setDaemon(true);
                if (last) {
                    while (childCount(clients.get(0), path) < n - 1) {
                        if (failure.get() != null) {
                            // A member that failed left no node: say why
                            // instead of waiting for it forever.
                            throw new Exception("double barrier member failed", failure.get());
                        }
                        Thread.sleep(1);
                    }
                    long start = System.nanoTime();
                    t.start();
                    in.await();
                    total += (lastIn.get() - start) / 1e9;
                } else {
                    t.start();
                }
            }
            leave.countDown();
            out.await();
            if (failure.get() != null) {
                throw new Exception("double barrier member failed", failure.get());
            }
        }
        System.out.printf("seconds=%.6f%n", total / rounds);
    }

    /**
     * Campaigns on the LeaderLatch at path once per line read from stdin: prints
     * "leader" as soon as await returns, then resigns (close). Returns at the
     * end of stdin. BenchmarkFailover kills the leader ahead of it and times
     * the kill until that line.
     */
    /**
     * Opens n clients, 50 at a time, each holding a mutex of its own under
     * root if hold; prints "ready", waits for the end of stdin, and closes
     * them.
     */
    private static void sessions(String servers, String root, int n, boolean hold) throws Exception {
        List<CuratorFramework> clients = new CopyOnWriteArrayList<>();
        List<InterProcessMutex> held = new CopyOnWriteArrayList<>();
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(50);
        List<java.util.concurrent.Future<?>> started = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            final int id = i;
            started.add(pool.submit(() -> {
                CuratorFramework c = connect(servers);
                clients.add(c);
                if (hold) {
                    InterProcessMutex m = new InterProcessMutex(c, String.format("%s/lock-%03d", root, id));
                    m.acquire();
                    held.add(m);
                }
                return null;
            }));
        }
        for (java.util.concurrent.Future<?> f : started) {
            f.get();
        }
        pool.shutdown();
        System.out.println("ready");
        System.out.flush();
        InputStream in = System.in;
        while (in.read() >= 0) {
            // until the end of stdin
        }
        for (InterProcessMutex m : held) {
            m.release();
        }
        for (CuratorFramework c : clients) {
            c.close();
        }
    }

    private static void latchFollow(CuratorFramework client, String path, String id) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        while (in.readLine() != null) {
            LeaderLatch l = new LeaderLatch(client, path, id);
            l.start();
            l.await();
            System.out.println("leader");
            System.out.flush();
            l.close();
        }
    }

    /** Hand-offs latchHandoff makes before it counts, so that the JIT is warm. */
    private static final int HANDOFF_WARM_UP_ROUNDS = 20;

    /**
     * How long latchHandoff waits once the next participant's node is there,
     * so that it is watching the leader's before the leader resigns: as long
     * as BenchmarkHandoff waits on our side.
     */
    private static final long HANDOFF_SETTLE_MILLIS = 20;

    /**
     * Two participants on clients of their own take turns to lead the
     * LeaderLatch at path: while one leads the other campaigns, and once its
     * node is there (seen by a third client) the leader resigns (close). A
     * round's time is from the close until the other's await returns. Prints
     * the counted rounds' times in nanoseconds, after the warm-up rounds.
     */
    private static void latchHandoff(String servers, String path, int rounds) throws Exception {
        CuratorFramework[] clients = {connect(servers), connect(servers)};
        CuratorFramework observer = connect(servers);
        LeaderLatch leader = new LeaderLatch(clients[0], path, "0");
        leader.start();
        leader.await();
        long[] took = new long[rounds];
        for (int r = -HANDOFF_WARM_UP_ROUNDS; r < rounds; r++) {
            int next = Math.floorMod(r + 1, 2);
            LeaderLatch follower = new LeaderLatch(clients[next], path, String.valueOf(next));
            follower.start();
            while (childCount(observer, path) < 2) {
                Thread.sleep(1);
            }
            Thread.sleep(HANDOFF_SETTLE_MILLIS);
            long start = System.nanoTime();
            leader.close();
            follower.await();
            long ns = System.nanoTime() - start;
            if (r >= 0) {
                took[r] = ns;
            }
            leader = follower;
        }
        leader.close();
        printNanos(took);
    }

    /**
     * latchHandoff with two LeaderSelectors, which requeue after each term: a
     * round's time is from the leader's takeLeadership returning until the
     * other's is called.
     */
    private static void selectorHandoff(String servers, String path, int rounds) throws Exception {
        CuratorFramework observer = connect(servers);
        // Who took the lead, and when; when the last term ended.
        BlockingQueue<long[]> led = new LinkedBlockingQueue<>();
        AtomicLong resigned = new AtomicLong();
        Semaphore[] resign = {new Semaphore(0), new Semaphore(0)};
        LeaderSelector[] selectors = new LeaderSelector[2];
        for (int i = 0; i < 2; i++) {
            int me = i;
            selectors[i] = new LeaderSelector(connect(servers), path, new LeaderSelectorListenerAdapter() {
                @Override
                public void takeLeadership(CuratorFramework c) throws Exception {
                    led.add(new long[] {me, System.nanoTime()});
                    resign[me].acquire();
                    resigned.set(System.nanoTime());
                }
            });
            selectors[i].setId(String.valueOf(i));
            selectors[i].autoRequeue();
        }
        selectors[0].start();
        int leader = (int) led.take()[0];
        selectors[1].start();
        long[] took = new long[rounds];
        for (int r = -HANDOFF_WARM_UP_ROUNDS; r < rounds; r++) {
            while (childCount(observer, path) < 2) {
                Thread.sleep(1);
            }
            Thread.sleep(HANDOFF_SETTLE_MILLIS);
            resign[leader].release();
            long[] next = led.take();
            if (r >= 0) {
                took[r] = next[1] - resigned.get();
            }
            leader = (int) next[0];
        }
        for (LeaderSelector s : selectors) {
            s.close();
        }
        printNanos(took);
    }

    /** Prints "ns=" and the times, comma-separated. */
    private static void printNanos(long[] took) {
        StringBuilder out = new StringBuilder("ns=");
        for (int r = 0; r < took.length; r++) {
            out.append(r > 0 ? "," : "").append(took[r]);
        }
        System.out.println(out);
    }

    // childCount counts path's children: none while it does not exist yet
    // (the first member to enter creates it).
    static int childCount(CuratorFramework c, String path) throws Exception {
        try {
            return c.getChildren().forPath(path).size();
        } catch (KeeperException.NoNodeException e) {
            return 0;
        }
    }
}
