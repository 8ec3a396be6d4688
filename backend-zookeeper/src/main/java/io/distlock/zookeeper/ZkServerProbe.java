package io.distlock.zookeeper;

import io.distlock.toolkit.HostList;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Tells why opening got no session, once it has waited {@code connectTimeout} in vain: the ZooKeeper client only
 * says that it is not connected, whether nothing listens at the addresses, or a server accepts a connection and closes
 * it at once. Each server is asked with one connection of its own and ZooKeeper's {@code srvr} command (allowed by
 * default): refused, "not currently serving requests" (no quorum, or still starting), closed without a word (what a
 * server does to a connection beyond its {@code maxClientCnxns} from one address, 60 by default), or no answer at all
 * (what a TLS-only port gives a plaintext client, waiting for the rest of a TLS record).
 */
final class ZkServerProbe {

    /** The most opening keeps of its {@code connectTimeout} for asking the servers. */
    static final long BUDGET_MILLIS = 500;

    private static final int MAX_ANSWER = 4096;

    private static final String CLOSED_UNANSWERED = "a server accepts connections and closes them unanswered: it takes"
            + " no more connections from this address (maxClientCnxns, 60 by default), or the port speaks TLS only"
            + " (tls=true)";

    private ZkServerProbe() {}

    /**
     * What the servers of {@code hosts} say, as a sentence for the failure's message, each asked for at most its share
     * of {@code budgetMillis}.
     *
     * @param tls whether the client spoke TLS (a plaintext client's hint names the TLS-only port)
     */
    static String why(HostList hosts, long budgetMillis, boolean tls) {
        int each = (int) Math.max(1, budgetMillis / hosts.addresses().size());
        List<String> findings = new ArrayList<>();
        for (HostList.Address address : hosts.addresses()) {
            findings.add(address + ": " + ask(address, each, tls));
        }
        return String.join("; ", findings);
    }

    private static String ask(HostList.Address address, int timeoutMillis, boolean tls) {
        if (tls) {
            // a TLS port would take our plaintext command for a bad handshake: only whether it listens is known
            return connects(address, timeoutMillis);
        }
        Socket socket = new Socket();
        try {
            try {
                socket.connect(new InetSocketAddress(address.host(), address.port()), timeoutMillis);
            } catch (ConnectException e) {
                return "nothing listens (" + e.getMessage() + ")";
            } catch (SocketTimeoutException e) {
                return "could not connect within " + timeoutMillis + " ms (" + e.getMessage() + ")";
            } catch (IOException e) {
                // the server accepted and reset at once, before the connect was done ("Broken pipe", "Connection
                // reset"), as it does beyond maxClientCnxns
                return CLOSED_UNANSWERED;
            }
            String answer;
            try {
                socket.setSoTimeout(timeoutMillis);
                socket.getOutputStream().write("srvr".getBytes(StandardCharsets.US_ASCII));
                socket.getOutputStream().flush();
                answer = read(socket.getInputStream());
            } catch (SocketTimeoutException e) {
                // a TLS port waits for a whole record header (5 bytes), so our 4 stay unanswered
                return "a server accepts connections but did not answer within " + timeoutMillis + " ms: the port"
                        + " speaks TLS only (tls=true), or the server is too busy to answer";
            } catch (IOException e) {
                answer = ""; // reset or broken (the write's "Broken pipe") before a word: closed unanswered
            }
            if (answer.isEmpty()) {
                return CLOSED_UNANSWERED;
            }
            if (answer.contains("not currently serving")) {
                return "a server runs but serves no client: its ensemble has no quorum, or it is still starting";
            }
            return "a server answers (" + firstLine(answer) + ") but gave this client no session";
        } finally {
            closeQuietly(socket);
        }
    }

    /** Closes the probe's socket, whatever a connection the server reset says to that. */
    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // the finding is made; nothing of the socket is kept
        }
    }

    private static String connects(HostList.Address address, int timeoutMillis) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(address.host(), address.port()), timeoutMillis);
            return "a server accepts connections but gave this client no session: it may take no more connections"
                    + " from this address (maxClientCnxns, 60 by default), or have no quorum";
        } catch (ConnectException e) {
            return "nothing listens (" + e.getMessage() + ")";
        } catch (IOException e) {
            return "could not connect within " + timeoutMillis + " ms (" + e.getMessage() + ")";
        }
    }

    /** Everything the server sends before it closes, at most {@link #MAX_ANSWER} bytes; empty if it sent nothing. */
    private static String read(InputStream in) throws IOException {
        ByteArrayOutputStream answer = new ByteArrayOutputStream();
        byte[] buffer = new byte[512];
        try {
            for (int n; answer.size() < MAX_ANSWER && (n = in.read(buffer)) > 0; ) {
                answer.write(buffer, 0, n);
            }
        } catch (IOException e) {
            if (answer.size() == 0) {
                throw e;
            }
        }
        return answer.toString(StandardCharsets.US_ASCII);
    }

    private static String firstLine(String answer) {
        int end = answer.indexOf('\n');
        return (end < 0 ? answer : answer.substring(0, end)).trim();
    }
}
