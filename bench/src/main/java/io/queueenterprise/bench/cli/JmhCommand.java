package io.queueenterprise.bench.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Unmatched;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code bin/qe jmh [JMH options] [benchmark regex]}: runs the JMH benchmarks of this project
 * (io.queueenterprise.bench.jmh). Forked JVMs inherit this JVM's flags, i.e. bin/jvm.args.
 */
@Command(name = "jmh", description = {
        "Run the JMH micro-benchmarks: CryptoBenchmark (seal/open per mode, engine and size) and "
                + "QueueThroughputBenchmark (append+read: raw Chronicle vs library plain vs encrypted).",
        "All arguments go to JMH, e.g. 'bin/qe jmh QueueThroughputBenchmark -prof gc', 'bin/qe jmh -h'."})
public final class JmhCommand implements Callable<Integer> {

    @Unmatched
    List<String> jmhArguments = new ArrayList<>();

    @Override
    public Integer call() throws Exception {
        org.openjdk.jmh.Main.main(jmhArguments.toArray(new String[0]));
        return 0;
    }
}
