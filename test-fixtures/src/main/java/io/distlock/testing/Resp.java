package io.distlock.testing;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;

/**
 * A minimal Redis (RESP2) client over a plain socket: one command per connection, simple/error/integer/bulk replies.
 * Enough for a readiness check ({@code PING}) and for tests of the fixtures; not a client library.
 */
final class Resp {

    private Resp() {}

    /**
     * Sends one command to {@code host:port} and returns the reply: the text of a simple string, integer or bulk
     * string, {@code null} for a null bulk string.
     *
     * @throws IOException on connection failure or timeout ({@code timeout} bounds connect and each read)
     * @throws IllegalStateException if the server answers with an error reply
     */
    static String command(String endpoint, Duration timeout, String... args) throws IOException {
        return command(endpoint, timeout, Optional.empty(), args);
    }

    /**
     * Sends {@code AUTH password} and then one command on the same connection, as {@link #command} does without a
     * password; {@code password} empty sends the command alone.
     *
     * @throws IOException on connection failure or timeout
     * @throws IllegalStateException if the server answers either with an error reply
     */
    static String command(String endpoint, Duration timeout, Optional<String> password, String... args)
            throws IOException {
        int colon = endpoint.lastIndexOf(':');
        String host = endpoint.substring(0, colon);
        int port = Integer.parseInt(endpoint.substring(colon + 1));
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), (int) timeout.toMillis());
            socket.setSoTimeout((int) timeout.toMillis());
            OutputStream out = socket.getOutputStream();
            InputStream in = new BufferedInputStream(socket.getInputStream());
            if (password.isPresent()) {
                out.write(encode("AUTH", password.get()));
                out.flush();
                readReply(in);
            }
            out.write(encode(args));
            out.flush();
            return readReply(in);
        }
    }

    /** Whether the server at {@code endpoint} answers {@code PING} with {@code PONG} within {@code timeout}. */
    static boolean ping(String endpoint, Duration timeout) {
        try {
            return "PONG".equals(command(endpoint, timeout, "PING"));
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /**
     * Whether the server at {@code endpoint} answers {@code PING} over TLS within {@code timeout}: {@code PONG}, or an
     * error reply such as {@code NOAUTH} from a server that wants credentials first (it is up either way).
     */
    static boolean answersOverTls(String endpoint, Duration timeout, SSLSocketFactory tls) {
        int colon = endpoint.lastIndexOf(':');
        String host = endpoint.substring(0, colon);
        int port = Integer.parseInt(endpoint.substring(colon + 1));
        try (Socket plain = new Socket()) {
            plain.connect(new InetSocketAddress(host, port), (int) timeout.toMillis());
            plain.setSoTimeout((int) timeout.toMillis());
            try (SSLSocket socket = (SSLSocket) tls.createSocket(plain, host, port, true)) {
                socket.startHandshake();
                OutputStream out = socket.getOutputStream();
                out.write(encode("PING"));
                out.flush();
                readReply(new BufferedInputStream(socket.getInputStream()));
                return true;
            }
        } catch (IllegalStateException errorReply) {
            return true;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    private static byte[] encode(String... args) {
        StringBuilder sb = new StringBuilder().append('*').append(args.length).append("\r\n");
        for (String arg : args) {
            byte[] bytes = arg.getBytes(StandardCharsets.UTF_8);
            sb.append('$').append(bytes.length).append("\r\n").append(arg).append("\r\n");
        }
        return sb.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static String readReply(InputStream in) throws IOException {
        int type = in.read();
        if (type < 0) {
            throw new IOException("Connection closed before a reply");
        }
        String line = readLine(in);
        switch (type) {
            case '+':
            case ':':
                return line;
            case '-':
                throw new IllegalStateException("Redis error: " + line);
            case '$':
                int length = Integer.parseInt(line);
                if (length < 0) {
                    return null;
                }
                byte[] data = in.readNBytes(length + 2);
                if (data.length < length + 2) {
                    throw new IOException("Connection closed inside a bulk reply");
                }
                return new String(data, 0, length, StandardCharsets.UTF_8);
            default:
                throw new IOException("Unsupported RESP reply type '" + (char) type + "': " + line);
        }
    }

    private static String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        int previous = -1;
        while (true) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("Connection closed inside a reply line");
            }
            if (previous == '\r' && b == '\n') {
                byte[] bytes = line.toByteArray();
                return new String(bytes, 0, bytes.length - 1, StandardCharsets.UTF_8);
            }
            line.write(b);
            previous = b;
        }
    }
}
