import java.io.BufferedReader;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.state.ConnectionState;

/**
 * Mode soak-mutex of CuratorPeer: a worker of zkrecipes' soak (tests/chaos)
 * on Curator's InterProcessMutex, writing the way Curator's documentation
 * leaves its users to write. THREADS threads share one client (one session,
 * as a service has); each takes the mutex of a path of PATHS at random
 * again and again and, unless the connection state listener has reported
 * SUSPENDED or LOST since the acquisition ("you cannot be certain that you
 * still hold the lock"), reads the key of the path in the soak's store,
 * writes it every PACE_MS for HOLD_MS, and writes once more; Curator has no
 * fencing token, so every operation carries token 0. The process follows
 * the WATCH nodes with a CuratorCache each, as a Curator 5 service follows
 * its configuration: a persistent watch, whose notifications keep coming
 * while the process's own bytes to the server are held.
 *
 * Every step goes to the TIMELINE file as a JSON line of the soak's format
 * (tests/chaos/timeline.go), appended with one write. The worker runs until
 * its standard input ends.
 */
final class SoakWorker {
    private final CuratorFramework client;
    private final String[] paths;
    private final String store;
    private final FileOutputStream timeline;
    private final long holdMillis;
    private final long paceMillis;
    private final long pid = ProcessHandle.current().pid();
    private final AtomicLong holds = new AtomicLong();
    private final AtomicLong ops = new AtomicLong();
    private final AtomicLong sections = new AtomicLong();
    /** SUSPENDED and LOST reports so far: a section compares it with its start's. */
    private final AtomicLong suspicions = new AtomicLong();
    private volatile String lastState = "";
    private volatile boolean stopping;

    private SoakWorker(CuratorFramework client, String[] paths, String store, String timeline, long holdMillis,
            long paceMillis) throws IOException {
        this.client = client;
        this.paths = paths;
        this.store = store;
        this.timeline = new FileOutputStream(timeline, true);
        this.holdMillis = holdMillis;
        this.paceMillis = paceMillis;
    }

    /** Runs the mode: a[1..8] are SERVERS PATHS STORE TIMELINE THREADS HOLD_MS PACE_MS WATCH. */
    static void run(CuratorFramework client, String[] a, int threads, long holdMillis, long paceMillis)
            throws Exception {
        SoakWorker w = new SoakWorker(client, a[2].split(","), a[3], a[4], holdMillis, paceMillis);
        w.log("{\"ev\":\"start\"}");
        client.getConnectionStateListenable().addListener((c, state) -> {
            if (state == ConnectionState.SUSPENDED || state == ConnectionState.LOST) {
                w.lastState = state.name();
                w.suspicions.incrementAndGet();
            }
            if (state == ConnectionState.CONNECTED || state == ConnectionState.RECONNECTED) {
                w.logSession();
            }
        });
        w.logSession();
        List<CuratorCache> caches = new ArrayList<>();
        if (!a[8].equals("-")) {
            for (String node : a[8].split(",")) {
                CuratorCache cache = CuratorCache.build(client, node);
                cache.start();
                caches.add(cache);
            }
        }
        List<Thread> loops = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            Thread t = new Thread(w::loop, "soak-" + i);
            t.start();
            loops.add(t);
        }
        // The harness ends the run by closing our standard input.
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        while (in.readLine() != null) {
            // nothing is sent; wait for the end
        }
        w.stopping = true;
        for (Thread t : loops) {
            t.join();
        }
        for (CuratorCache c : caches) {
            c.close();
        }
        w.log("{\"ev\":\"end\",\"note\":\"" + w.sections.get() + " sections\"}");
        w.timeline.close();
    }

    private void logSession() {
        try {
            long id = client.getZookeeperClient().getZooKeeper().getSessionId();
            long timeout = client.getZookeeperClient().getZooKeeper().getSessionTimeout();
            log("{\"ev\":\"session\",\"note\":\"0x" + Long.toHexString(id) + "\",\"timeout\":" + timeout * 1_000_000L + "}");
        } catch (Exception e) {
            System.err.println("soak-mutex: session: " + e);
        }
    }

    private void loop() {
        Map<String, InterProcessMutex> mutexes = new HashMap<>();
        Store conn = null;
        while (!stopping) {
            String path = paths[ThreadLocalRandom.current().nextInt(paths.length)];
            String hold = pid + "." + holds.incrementAndGet();
            String about = ",\"hold\":\"" + hold + "\",\"recipe\":\"curator\",\"paths\":[\"" + path + "\"]";
            InterProcessMutex m = mutexes.computeIfAbsent(path, p -> new InterProcessMutex(client, p));
            try {
                log("{\"ev\":\"wait\"" + about + "}");
                m.acquire();
            } catch (Exception e) {
                System.err.println("soak-mutex: acquire " + path + ": " + e);
                pause(10);
                continue;
            }
            long seen = suspicions.get();
            sections.incrementAndGet();
            log("{\"ev\":\"enter\"" + about + ",\"tokens\":[0]}");
            try {
                if (conn == null) {
                    conn = new Store(store);
                }
                String basis = "?";
                if (suspicions.get() == seen) {
                    basis = conn.read(hold, path);
                }
                long end = System.nanoTime() + holdMillis * 1_000_000L;
                int n = 0;
                for (long left; (left = end - System.nanoTime()) > 0;) {
                    pause(paceMillis > 0 ? Math.min(paceMillis, left / 1_000_000L + 1) : left / 1_000_000L + 1);
                    if (paceMillis > 0 && suspicions.get() == seen) {
                        basis = conn.write(hold, path, hold + ":" + ++n, basis);
                    }
                }
                if (suspicions.get() == seen) {
                    basis = conn.write(hold, path, hold + ":" + ++n, basis);
                }
            } catch (IOException e) {
                System.err.println("soak-mutex: store: " + e);
                conn = null;
            }
            if (suspicions.get() == seen) {
                log("{\"ev\":\"exit\",\"hold\":\"" + hold + "\"}");
            } else {
                log("{\"ev\":\"loss\",\"hold\":\"" + hold + "\",\"note\":\"" + lastState + "\"}");
            }
            try {
                m.release();
            } catch (Exception e) {
                System.err.println("soak-mutex: release " + path + ": " + e);
            }
        }
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static long now() {
        Instant t = Instant.now();
        return t.getEpochSecond() * 1_000_000_000L + t.getNano();
    }

    /** Appends one event, stamped with the time and pid, with a single write. */
    private void log(String event) {
        String head = "{\"t\":" + now() + ",\"pid\":" + pid + ",";
        byte[] line = (head + event.substring(1) + "\n").getBytes(StandardCharsets.UTF_8);
        synchronized (timeline) {
            try {
                timeline.write(line);
            } catch (IOException e) {
                System.err.println("soak-mutex: timeline: " + e);
            }
        }
    }

    /** One thread's connection to the soak's store. */
    private final class Store {
        private final Socket socket;
        private final BufferedReader in;
        private final OutputStream out;

        Store(String addr) throws IOException {
            int colon = addr.lastIndexOf(':');
            socket = new Socket(addr.substring(0, colon), Integer.parseInt(addr.substring(colon + 1)));
            socket.setTcpNoDelay(true);
            in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
            out = socket.getOutputStream();
        }

        private String call(String request) throws IOException {
            out.write((request + "\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
            String reply = in.readLine();
            if (reply == null) {
                throw new IOException("the store closed the connection");
            }
            return reply;
        }

        /** A fenced read with token 0; returns the value read, or "?" if refused. */
        String read(String hold, String key) throws IOException {
            long op = ops.incrementAndGet();
            long begin = now();
            String reply = call("R " + pid + " " + op + " " + key + " 0 1");
            boolean ok = reply.startsWith("OK ");
            String value = ok ? reply.substring(3) : "";
            log("{\"ev\":\"store-read\",\"hold\":\"" + hold + "\",\"paths\":[\"" + key + "\"],\"op\":" + op
                    + ",\"fence\":true,\"ok\":" + ok + ",\"value\":\"" + value + "\",\"begin\":" + begin + "}");
            return ok ? value : "?";
        }

        /** A write with token 0; returns the value the section has seen last. */
        String write(String hold, String key, String value, String basis) throws IOException {
            long op = ops.incrementAndGet();
            long begin = now();
            String reply = call("W " + pid + " " + op + " " + key + " 0 " + value + " " + basis + " 1");
            boolean ok = reply.equals("OK");
            log("{\"ev\":\"store-write\",\"hold\":\"" + hold + "\",\"paths\":[\"" + key + "\"],\"op\":" + op
                    + ",\"ok\":" + ok + ",\"value\":\"" + value + "\",\"basis\":\"" + basis + "\",\"excl\":true,\"begin\":"
                    + begin + "}");
            return ok ? value : basis;
        }
    }
}
