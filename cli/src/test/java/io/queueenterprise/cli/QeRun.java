package io.queueenterprise.cli;

import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;

/** What one in-process run of {@code qe ...} printed and returned (the same command line bin/qe builds). */
record QeRun(int exitCode, String out, String err) {

    static QeRun qe(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine commandLine = QeCommand.commandLine()
                .setOut(new PrintWriter(out, true))
                .setErr(new PrintWriter(err, true));
        int exitCode = commandLine.execute(args);
        return new QeRun(exitCode, out.toString(), err.toString());
    }
}
