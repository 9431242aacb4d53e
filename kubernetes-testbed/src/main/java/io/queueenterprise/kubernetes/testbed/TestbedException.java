package io.queueenterprise.kubernetes.testbed;

/** The test bed could not be provisioned, started, queried or torn down; the message says which step and where its log is. */
public final class TestbedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public TestbedException(String message) {
        super(message);
    }

    public TestbedException(String message, Throwable cause) {
        super(message, cause);
    }
}
