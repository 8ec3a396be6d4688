package io.distlock.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The proxy in front of an in-JVM echo server. */
@Timeout(60)
class TcpProxyTest {

    private static ServerSocket echoServer;
    private static TcpProxy proxy;

    @BeforeAll
    static void startEchoServerAndProxy() throws IOException {
        echoServer = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(() -> {
            while (!echoServer.isClosed()) {
                try {
                    Socket s = echoServer.accept();
                    Thread echo = new Thread(() -> echo(s));
                    echo.setDaemon(true);
                    echo.start();
                } catch (IOException e) {
                    return;
                }
            }
        });
        acceptor.setDaemon(true);
        acceptor.start();
        proxy = TcpProxy.start("echo", echoServer.getLocalPort());
    }

    private static void echo(Socket s) {
        try (s) {
            s.getInputStream().transferTo(s.getOutputStream());
        } catch (IOException ignored) {
            // client went away
        }
    }

    @AfterAll
    static void stop() throws IOException {
        proxy.close();
        echoServer.close();
    }

    @AfterEach
    void heal() {
        proxy.heal();
    }

    private static Socket connect() throws IOException {
        Socket s = new Socket(InetAddress.getLoopbackAddress(), proxy.port());
        s.setSoTimeout(3_000);
        return s;
    }

    private static String roundTrip(Socket s, String text) throws IOException {
        OutputStream out = s.getOutputStream();
        out.write(text.getBytes(StandardCharsets.UTF_8));
        out.flush();
        byte[] buf = new byte[text.length()];
        InputStream in = s.getInputStream();
        int read = 0;
        while (read < buf.length) {
            int n = in.read(buf, read, buf.length - read);
            if (n < 0) {
                throw new IOException("end of stream after " + read + " bytes");
            }
            read += n;
        }
        return new String(buf, StandardCharsets.UTF_8);
    }

    @Test
    void pass_forwardsBothWays() throws IOException {
        try (Socket s = connect()) {
            assertThat(roundTrip(s, "hello")).isEqualTo("hello");
            assertThat(roundTrip(s, "again")).isEqualTo("again");
        }
        assertThat(proxy.endpoint()).isEqualTo("127.0.0.1:" + proxy.port());
    }

    @Test
    void drop_closesOpenConnections_andNewOnes() throws IOException {
        try (Socket open = connect()) {
            assertThat(roundTrip(open, "before")).isEqualTo("before");

            proxy.drop();

            assertThatThrownBy(() -> roundTrip(open, "after")).isInstanceOf(IOException.class);
            try (Socket fresh = connect()) {
                assertThatThrownBy(() -> roundTrip(fresh, "new")).isInstanceOf(IOException.class);
            }
        }
    }

    @Test
    void blackhole_holdsTraffic_andHealDeliversIt() throws IOException {
        try (Socket open = connect()) {
            assertThat(roundTrip(open, "before")).isEqualTo("before");

            proxy.blackhole();

            open.setSoTimeout(300);
            assertThatThrownBy(() -> roundTrip(open, "held")).isInstanceOf(SocketTimeoutException.class);
            Socket fresh = connect();
            fresh.setSoTimeout(300);
            assertThatThrownBy(() -> roundTrip(fresh, "queued")).isInstanceOf(SocketTimeoutException.class);

            proxy.heal();

            open.setSoTimeout(3_000);
            fresh.setSoTimeout(3_000);
            // Bytes sent during the blackhole arrive after the heal, like TCP retransmissions.
            assertThat(new String(open.getInputStream().readNBytes(4), StandardCharsets.UTF_8))
                    .isEqualTo("held");
            assertThat(new String(fresh.getInputStream().readNBytes(6), StandardCharsets.UTF_8))
                    .isEqualTo("queued");
            assertThat(roundTrip(open, "after")).isEqualTo("after");
            fresh.close();
        }
    }

    @Test
    void heal_afterDrop_acceptsNewConnections() throws IOException {
        proxy.drop();
        proxy.heal();
        try (Socket s = connect()) {
            assertThat(roundTrip(s, "back")).isEqualTo("back");
        }
    }
}
