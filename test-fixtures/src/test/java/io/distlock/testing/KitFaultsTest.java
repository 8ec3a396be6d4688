package io.distlock.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.kit.NodeFaults;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The kit's node faults over a fixture's nodes: what they declare, what a kill does, and the arguments refused. */
class KitFaultsTest {

    private final List<String> calls = new ArrayList<>();

    /** A node that records the calls it gets (the kit's hooks only forward them; the servers' own tests run them). */
    private ServerNode node(String name) {
        return (ServerNode) Proxy.newProxyInstance(
                ServerNode.class.getClassLoader(), new Class<?>[] {ServerNode.class}, (proxy, method, args) -> {
                    if (method.getName().equals("toString")) {
                        return name;
                    }
                    calls.add(name + "." + method.getName());
                    return method.getReturnType() == boolean.class ? Boolean.TRUE : null;
                });
    }

    @Test
    void nodes_declareTheirCountQuorumAndStall_andAKillGoesToTheNodeAfterTheHook() {
        List<ServerNode> nodes = List.of(node("a"), node("b"), node("c"));
        NodeFaults plain = KitFaults.nodes(nodes, 2, () -> calls.add("restore"));
        assertThat(plain.nodeCount()).isEqualTo(3);
        assertThat(plain.quorum()).isEqualTo(2);
        assertThat(plain.stallAfterKill()).isEqualTo(Duration.ZERO);

        NodeFaults stalling = KitFaults.nodes(nodes, 2, Duration.ofSeconds(20), () -> calls.add("restore"));
        assertThat(stalling.stallAfterKill()).isEqualTo(Duration.ofSeconds(20));

        NodeFaults hooked = KitFaults.nodes(nodes, 2, i -> calls.add("before " + i), () -> calls.add("restore"));
        hooked.kill(1);
        hooked.restoreAll();
        assertThat(calls).containsExactly("before 1", "b.kill9", "restore");
    }

    @Test
    void nodes_refuseAQuorumOutsideTheNodes_aNegativeStall_andNulls() {
        List<ServerNode> nodes = List.of(node("a"), node("b"), node("c"));
        Runnable restore = () -> {};
        assertThatThrownBy(() -> KitFaults.nodes(nodes, 0, restore))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("quorum 0 of 3");
        assertThatThrownBy(() -> KitFaults.nodes(nodes, 4, restore))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("quorum 4 of 3");
        assertThatThrownBy(() -> KitFaults.nodes(nodes, 2, Duration.ofSeconds(-1), restore))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("stallAfterKill")
                .hasMessageContaining("negative");
        assertThatThrownBy(() -> KitFaults.nodes(nodes, 2, (Duration) null, restore))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("stallAfterKill");
        assertThatThrownBy(() -> KitFaults.nodes(nodes, 2, null))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("restoreAll");
    }
}
