package io.queueenterprise.cli;

import io.queueenterprise.crypto.CipherMode;
import io.queueenterprise.queue.CorruptedQueueException;
import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.ExcerptDecryptionException;
import io.queueenterprise.queue.ExcerptsLostException;
import io.queueenterprise.queue.QueueException;
import io.queueenterprise.queue.QueueTailer;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code qe verify DIR}: reads every excerpt of a queue read-only (and, with keys, opens each one) and lists
 * what cannot be read: excerpts that fail to open, ranges a damaged excerpt header hides, and ranges that were
 * written and are gone (a cycle file cut short or deleted), each with how to recover it. Exit code 0 when
 * everything reads, 1 when something does not (or the queue cannot be opened), 2 for bad usage.
 */
@Command(name = "verify", mixinStandardHelpOptions = true,
        description = {"Read every excerpt of a queue (read-only) and report what cannot be read: excerpts that",
                "fail to open (tampered, wrong key, unknown key id), ranges hidden by a damaged excerpt header, and",
                "ranges written and since lost (a cycle file cut short or deleted); each with how to recover it.",
                "Exit code: 0 all readable, 1 problems found or the queue cannot be opened, 2 bad usage."})
final class VerifyCommand implements Callable<Integer> {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Parameters(index = "0", paramLabel = "DIR", description = "the queue's directory")
    Path dir;

    @Option(names = "--keys", paramLabel = "KEY_DIR",
            description = "key directory of an encrypted queue (files <id>.key and active, as a mounted Secret)")
    Path keys;

    @Option(names = "--ctr", description = "the encrypted queue uses AES_128_CTR (unauthenticated: only its structure is checked)")
    boolean ctr;

    @Override
    public Integer call() {
        if (!Files.isDirectory(dir)) {
            throw new CommandLine.ParameterException(spec.commandLine(), "DIR: " + dir + " is not a directory");
        }
        if (ctr && keys == null) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--ctr needs --keys");
        }
        PrintWriter out = spec.commandLine().getOut();
        EnterpriseQueue.Builder builder = EnterpriseQueue.builder(dir).readOnly(true);
        if (keys != null) {
            builder.encrypted(keys);
            if (ctr) {
                builder.cipherMode(CipherMode.AES_128_CTR);
            }
        }
        List<String> problems = new ArrayList<>();
        long read = 0;
        try (EnterpriseQueue queue = builder.build(); QueueTailer tailer = queue.createTailer()) {
            byte[] buffer = new byte[(int) Math.min(queue.maxExcerptLength(), Integer.MAX_VALUE - 64)];
            while (true) {
                try {
                    if (tailer.read(buffer) < 0) {
                        break;
                    }
                    read++;
                } catch (ExcerptDecryptionException e) {
                    problems.add(hex(e.index()) + ": " + e.reason() + "\n    " + RECOVER_ONE);
                    tailer.skip();
                } catch (ExcerptsLostException e) {
                    problems.add(hex(e.firstLost()) + " to " + (e.lastLost() == ExcerptsLostException.UNKNOWN_INDEX
                            ? "the end of its cycle" : hex(e.lastLost())) + ": lost, " + e.why() + "\n    " + RECOVER_LOST);
                    if (tailer.skipDamaged() < 0) {
                        break;
                    }
                } catch (CorruptedQueueException e) {
                    long next = tailer.skipDamaged();
                    problems.add(hex(e.index()) + " to " + (next < 0 ? "the end" : hex(next - 1))
                            + ": unreadable, hidden by a damaged excerpt header\n    " + RECOVER_LOST);
                    if (next < 0) {
                        break;
                    }
                }
            }
            out.printf("%s: %d excerpts read, %s%n", dir, read,
                    problems.isEmpty() ? "all readable" : problems.size() + " problem(s):");
        } catch (QueueException e) {
            out.println(dir + ": cannot be verified: " + e.getMessage());
            return 1;
        }
        problems.forEach(p -> out.println("  " + p));
        return problems.isEmpty() ? 0 : 1;
    }

    static final String RECOVER_ONE = "recover: a replica holds this excerpt intact (a replication node's follower"
            + " copy, or the leader's); an application that accepts the loss calls tailer.skip() to read on";
    static final String RECOVER_LOST = "recover: copy the range from a replica that holds it (a replication node"
            + " fetches a damaged copy again from its leader at start); an application that accepts the loss calls"
            + " tailer.skipDamaged() to read on after it";

    private static String hex(long index) {
        return "0x" + Long.toHexString(index);
    }
}
