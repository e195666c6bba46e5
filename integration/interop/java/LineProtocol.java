// LineProtocol is the line protocol the interop helpers (CuratorHelper,
// CacheHelper, LeaderHelper) speak, and their process setup: one command
// per line on stdin, one reply line per command on stdout ("OK ..." or
// "ERR ..."); lines that start with "EVENT " are asynchronous notices, not
// replies. It is compiled with each helper, and also starts their Curator
// clients.
//
// Commands run one at a time on the main thread. stdout carries the
// protocol only: System.out is redirected to stderr, where Curator and
// ZooKeeper log through slf4j-simple.

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;

final class LineProtocol {
    /** Handler answers one command, split into words; it returns the reply line. */
    interface Handler {
        String handle(String[] words) throws Exception;
    }

    private static final String EOF = "\u0000eof";

    private final PrintStream out;
    private final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();

    /** Takes stdout for the protocol and sends System.out to stderr. */
    LineProtocol() {
        out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        System.setOut(System.err);
    }

    /**
     * Serves commands until "close" or end of input, then exits the
     * process; shutdown runs at exit (a shutdown hook), so it also runs
     * when the process exits with a command still blocked.
     */
    void serve(Handler handler, Runnable shutdown) throws InterruptedException {
        Runtime.getRuntime().addShutdownHook(new Thread(shutdown));
        Thread reader = new Thread(this::readStdin, "stdin");
        reader.setDaemon(true);
        reader.start();
        loop(handler);
        System.exit(0);
    }

    // readStdin queues input lines. At end of input it queues EOF, and exits
    // the process if the main thread does not take it within 2 s (it may be
    // blocked in an acquire); the shutdown hook closes the session.
    private void readStdin() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                lines.put(line);
            }
        } catch (Exception e) {
            // treated as end of input
        }
        try {
            lines.put(EOF);
            Thread.sleep(2000);
        } catch (InterruptedException e) {
            // exit anyway
        }
        System.exit(0);
    }

    /**
     * Takes the next input line, for a command that reads more than one;
     * null at end of input.
     */
    String nextLine() throws InterruptedException {
        String line = lines.take();
        return line == EOF ? null : line;
    }

    /** Writes one line to stdout; safe from any thread. */
    synchronized void emit(String line) {
        out.println(line);
        out.flush();
    }

    private void loop(Handler handler) throws InterruptedException {
        while (true) {
            String line = nextLine();
            if (line == null) {
                return;
            }
            line = line.trim();
            if (line.isEmpty()) {
                continue;
            }
            String[] a = line.split("\\s+");
            String reply;
            try {
                reply = handler.handle(a);
            } catch (Throwable e) {
                reply = "ERR " + oneLine(e);
            }
            emit(reply);
            if (a[0].equals("close")) {
                return;
            }
        }
    }

    /**
     * newClient starts the Curator client a helper's connect command makes
     * and waits until it is connected, for at most 20 s.
     */
    static CuratorFramework newClient(String connectString, int sessionTimeoutMs) throws InterruptedException {
        CuratorFramework c = CuratorFrameworkFactory.builder()
            .connectString(connectString)
            .sessionTimeoutMs(sessionTimeoutMs)
            .connectionTimeoutMs(5000)
            .retryPolicy(new ExponentialBackoffRetry(20, 10, 500))
            .build();
        c.start();
        if (!c.blockUntilConnected(20, TimeUnit.SECONDS)) {
            c.close();
            throw new IllegalStateException("not connected to " + connectString + " within 20 s");
        }
        return c;
    }

    /** hex is b in lower-case hex, or "-" for no bytes (null or empty). */
    static String hex(byte[] b) {
        if (b == null || b.length == 0) {
            return "-";
        }
        StringBuilder s = new StringBuilder();
        for (byte x : b) {
            s.append(String.format("%02x", x));
        }
        return s.toString();
    }

    /** unhex is hex's inverse: "-" is no bytes. */
    static byte[] unhex(String s) {
        if (s.equals("-")) {
            return new byte[0];
        }
        byte[] b = new byte[s.length() / 2];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        }
        return b;
    }

    /** oneLine is e's class and message on one line. */
    static String oneLine(Throwable e) {
        String m = e.getClass().getSimpleName() + ": " + e.getMessage();
        return m.replace('\n', ' ').replace('\r', ' ');
    }

    /** need throws unless command a has at least n-1 arguments. */
    static void need(String[] a, int n) {
        if (a.length < n) {
            throw new IllegalArgumentException(a[0] + ": want at least " + (n - 1) + " arguments, got " + (a.length - 1));
        }
    }
}
