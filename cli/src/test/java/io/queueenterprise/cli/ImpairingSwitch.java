package io.queueenterprise.cli;

import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.NativeLong;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.DelayQueue;
import java.util.concurrent.Delayed;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A userspace netem: the wire between the namespaces of a {@link NetworkLab}. This machine's kernel has no
 * {@code sch_netem} (and no {@code act_gact}), so {@code tc qdisc ... netem} cannot run here; instead each host
 * namespace gets a TUN device whose other end is this process, which forwards IPv4 packets by destination address
 * and applies, per host, loss, delay, reordering, duplication and partition with a seeded random generator.
 *
 * <p>Run as a child JVM inside the lab's hub namespace: {@code ImpairingSwitch HOSTS SEED}; it creates TUN devices
 * {@code qt0..qt<HOSTS-1>} (the lab moves each into its host's namespace), prints {@code READY}, then obeys one
 * command per line on stdin, answering each with one line: {@code impair HOST loss=P delay=MS reorder=P
 * duplicate=P}, {@code partition HOST}, {@code heal}, {@code stats}. End of stdin ends it (the devices go with it).
 * Impairments of a host apply to every packet it sends or receives.</p>
 */
public final class ImpairingSwitch {
    private static final NativeLong TUNSETIFF = new NativeLong(0x400454caL);
    private static final short IFF_TUN = 0x0001;
    private static final short IFF_NO_PI = 0x1000;
    private static final int O_RDWR = 2;
    /** How long a reordered packet is held back, so that those behind it overtake it. */
    private static final long REORDER_HOLD_NANOS = TimeUnit.MILLISECONDS.toNanos(3);

    interface LibC extends Library {
        LibC C = Native.load("c", LibC.class);

        int open(String path, int flags);

        int ioctl(int fd, NativeLong request, byte[] ifreq);

        NativeLong read(int fd, byte[] buffer, NativeLong count);

        NativeLong write(int fd, byte[] buffer, NativeLong count);
    }

    /** Per host: what happens to the packets it sends or receives. Replaced whole, read without locks. */
    record Impairment(double loss, long delayNanos, double reorder, double duplicate) {
        static final Impairment NONE = new Impairment(0, 0, 0, 0);
    }

    private record Scheduled(long dueNanos, int toHost, byte[] packet) implements Delayed {
        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(dueNanos - System.nanoTime(), TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(Delayed other) {
            return Long.compare(dueNanos, ((Scheduled) other).dueNanos);
        }
    }

    private final int[] tun;
    private final Impairment[] impairments;
    private final Random random;
    private final DelayQueue<Scheduled> inFlight = new DelayQueue<>();
    private final AtomicLong forwarded = new AtomicLong();
    private final AtomicLong dropped = new AtomicLong();
    private final AtomicLong duplicated = new AtomicLong();
    private final AtomicLong reordered = new AtomicLong();

    private ImpairingSwitch(int hosts, long seed) {
        tun = new int[hosts];
        impairments = new Impairment[hosts];
        Arrays.fill(impairments, Impairment.NONE);
        random = new Random(seed);
    }

    public static void main(String[] args) throws Exception {
        ImpairingSwitch sw = new ImpairingSwitch(Integer.parseInt(args[0]), Long.parseLong(args[1]));
        for (int i = 0; i < sw.tun.length; i++) {
            sw.tun[i] = openTun("qt" + i);
        }
        for (int i = 0; i < sw.tun.length; i++) {
            int host = i;
            Thread reader = new Thread(() -> sw.readLoop(host), "tun-reader-" + i);
            reader.setDaemon(true);
            reader.start();
        }
        Thread writer = new Thread(sw::writeLoop, "tun-writer");
        writer.setDaemon(true);
        writer.start();
        System.out.println("READY");
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            System.out.println(sw.command(line.trim()));
            System.out.flush();
        }
        System.exit(0); // stdin closed: the lab is done; the devices vanish with the descriptors
    }

    private static int openTun(String name) {
        int fd = LibC.C.open("/dev/net/tun", O_RDWR);
        if (fd < 0) {
            throw new IllegalStateException("open /dev/net/tun failed, errno " + Native.getLastError());
        }
        byte[] ifreq = new byte[40];
        byte[] n = name.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(n, 0, ifreq, 0, n.length);
        short flags = IFF_TUN | IFF_NO_PI;
        ifreq[16] = (byte) flags; // little-endian short ifr_flags after the 16-byte name
        ifreq[17] = (byte) (flags >> 8);
        if (LibC.C.ioctl(fd, TUNSETIFF, ifreq) < 0) {
            throw new IllegalStateException("TUNSETIFF " + name + " failed, errno " + Native.getLastError());
        }
        return fd;
    }

    private void readLoop(int fromHost) {
        byte[] buffer = new byte[65536];
        while (true) {
            long n = LibC.C.read(tun[fromHost], buffer, new NativeLong(buffer.length)).longValue();
            if (n < 0) {
                return;
            }
            if (n < 20 || (buffer[0] >> 4) != 4) {
                continue; // IPv4 only: the lab's addresses are IPv4; IPv6 chatter (router solicitations) is dropped
            }
            int toHost = (buffer[19] & 0xff) - 1; // 10.213.0.(host + 1)
            if (toHost < 0 || toHost >= tun.length || toHost == fromHost) {
                continue;
            }
            forward(fromHost, toHost, Arrays.copyOf(buffer, (int) n));
        }
    }

    private void forward(int fromHost, int toHost, byte[] packet) {
        Impairment a = impairments[fromHost];
        Impairment b = impairments[toHost];
        double loss = 1 - (1 - a.loss()) * (1 - b.loss());
        long delay = a.delayNanos() + b.delayNanos();
        double reorder = Math.max(a.reorder(), b.reorder());
        double duplicate = Math.max(a.duplicate(), b.duplicate());
        boolean drop;
        boolean hold;
        boolean twice;
        synchronized (random) {
            drop = random.nextDouble() < loss;
            hold = random.nextDouble() < reorder;
            twice = random.nextDouble() < duplicate;
        }
        if (drop) {
            dropped.incrementAndGet();
            return;
        }
        long due = System.nanoTime() + delay + (hold ? REORDER_HOLD_NANOS : 0);
        if (hold) {
            reordered.incrementAndGet();
        }
        inFlight.add(new Scheduled(due, toHost, packet));
        if (twice) {
            duplicated.incrementAndGet();
            inFlight.add(new Scheduled(due, toHost, packet));
        }
    }

    private void writeLoop() {
        while (true) {
            Scheduled s;
            try {
                s = inFlight.take();
            } catch (InterruptedException e) {
                return;
            }
            LibC.C.write(tun[s.toHost()], s.packet(), new NativeLong(s.packet().length));
            forwarded.incrementAndGet();
        }
    }

    private String command(String line) {
        String[] words = line.split("\\s+");
        try {
            switch (words[0]) {
                case "impair" -> {
                    int host = Integer.parseInt(words[1]);
                    double loss = 0;
                    long delay = 0;
                    double reorder = 0;
                    double duplicate = 0;
                    for (String kv : Arrays.copyOfRange(words, 2, words.length)) {
                        String[] p = kv.split("=", 2);
                        switch (p[0]) {
                            case "loss" -> loss = probability(p[1]);
                            case "delay" -> delay = TimeUnit.MILLISECONDS.toNanos(Long.parseLong(p[1]));
                            case "reorder" -> reorder = probability(p[1]);
                            case "duplicate" -> duplicate = probability(p[1]);
                            default -> throw new IllegalArgumentException("unknown impairment " + p[0]);
                        }
                    }
                    impairments[host] = new Impairment(loss, delay, reorder, duplicate);
                    return "OK " + line;
                }
                case "partition" -> {
                    impairments[Integer.parseInt(words[1])] = new Impairment(1, 0, 0, 0);
                    return "OK " + line;
                }
                case "heal" -> {
                    Arrays.fill(impairments, Impairment.NONE);
                    return "OK heal";
                }
                case "stats" -> {
                    return String.format(Locale.ROOT, "OK forwarded=%d dropped=%d duplicated=%d reordered=%d",
                            forwarded.get(), dropped.get(), duplicated.get(), reordered.get());
                }
                default -> throw new IllegalArgumentException("unknown command " + words[0]);
            }
        } catch (RuntimeException e) {
            return "ERROR " + e.getMessage();
        }
    }

    private static double probability(String text) {
        double p = Double.parseDouble(text);
        if (p < 0 || p > 1) {
            throw new IllegalArgumentException("probability " + text + " is not in 0..1");
        }
        return p;
    }
}
