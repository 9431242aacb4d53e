package io.queueenterprise.queue;

/** Finds raw bytes in cycle files and excerpts: how tests prove plaintext is (not) on disk. */
final class ByteSearch {
    private ByteSearch() {
    }

    /** Position of the first occurrence of {@code needle} in {@code haystack}, or -1. */
    static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    static boolean contains(byte[] haystack, byte[] needle) {
        return indexOf(haystack, needle) >= 0;
    }
}
