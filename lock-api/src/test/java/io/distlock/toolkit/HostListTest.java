package io.distlock.toolkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockConfigurationException;
import io.distlock.toolkit.HostList.Address;
import java.net.URI;
import org.junit.jupiter.api.Test;

/** The host list of a store URI: what is read, and what each malformed list is told. */
class HostListTest {

    private static final String EXPECTED = "expected s://host[:port][,host[:port]...]";

    private static HostList parse(String uri) {
        return HostList.parse(URI.create(uri), "Test", 1234, EXPECTED);
    }

    private static void rejected(String uri, String problem) {
        assertThatThrownBy(() -> parse(uri))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("Invalid Test URI '" + uri + "'")
                .hasMessageContaining(problem)
                .hasMessageEndingWith("; " + EXPECTED);
    }

    @Test
    void parse_hostsWithAndWithoutPorts_keepsOrderAndFillsTheDefaultPort() {
        HostList hosts = parse("s://a:1,b,c.example.com:65535/path");

        assertThat(hosts.addresses())
                .containsExactly(new Address("a", 1), new Address("b", 1234), new Address("c.example.com", 65535));
        assertThat(hosts).hasToString("a:1,b:1234,c.example.com:65535");
    }

    @Test
    void parse_ipv4AndIpv6InBrackets_keepsTheAddressWithoutBrackets() {
        // java.net.URI takes a bracketed address only as the sole host of a URI
        assertThat(parse("s://127.0.0.1:7,10.0.0.1").addresses())
                .containsExactly(new Address("127.0.0.1", 7), new Address("10.0.0.1", 1234));
        assertThat(parse("s://[::1]:8").addresses()).containsExactly(new Address("::1", 8));
        assertThat(parse("s://[fe80::1]")).hasToString("[fe80::1]:1234");
    }

    @Test
    void parse_noHost_isRejected() {
        rejected("s:///path", "names no host");
        rejected("s:opaque", "names no host");
    }

    @Test
    void parse_userInformation_isRejected() {
        rejected("s://me@a:1/path", "user information");
    }

    @Test
    void parse_blankHosts_areRejected() {
        rejected("s://a:1,,b:2", "empty host in the host list");
        rejected("s://a:1,", "empty host in the host list");
        rejected("s://:1", "empty host in ':1'");
    }

    @Test
    void parse_badPorts_areRejected() {
        rejected("s://a:0", "bad port '0' in 'a:0': a port must be 1..65535");
        rejected("s://a:65536", "bad port '65536'");
        rejected("s://a:99999999999", "bad port '99999999999'");
        rejected("s://a:1,b:x", "bad port 'x' in 'b:x'");
        rejected("s://a:", "bad port '' in 'a:'");
        rejected("s://a:+80", "bad port '+80'");
    }

    @Test
    void parse_malformedHosts_areRejected() {
        rejected("s://a!b:1", "malformed host 'a!b'");
        rejected("s://::1:1", "an IPv6 address goes in brackets");
    }

    @Test
    void parse_sameHostTwice_isRejected_ignoringCase() {
        rejected("s://a:1,b:2,a:1", "names the host a:1 twice");
        rejected("s://Host,host:1234", "names the host Host:1234 twice");
    }

    @Test
    void parse_sameHostOnOtherPorts_isAccepted() {
        assertThat(parse("s://a:1,a:2,a").addresses())
                .containsExactly(new Address("a", 1), new Address("a", 2), new Address("a", 1234));
    }

    @Test
    void parseAllowingDuplicates_keepsTheRepeatedHost_andStillRejectsMalformedOnes() {
        assertThat(HostList.parseAllowingDuplicates(URI.create("s://a:1,a:1"), "Test", 1234, EXPECTED)
                        .addresses())
                .containsExactly(new Address("a", 1), new Address("a", 1));
        assertThatThrownBy(() -> HostList.parseAllowingDuplicates(URI.create("s://a:1,,a:1"), "Test", 1234, EXPECTED))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("empty host");
    }

    @Test
    void address_outOfRangePort_isRejected() {
        assertThatThrownBy(() -> new Address("a", 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Address("a", 65536)).isInstanceOf(IllegalArgumentException.class);
    }
}
