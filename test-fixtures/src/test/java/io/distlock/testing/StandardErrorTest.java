package io.distlock.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.PrintStream;
import org.junit.jupiter.api.Test;

class StandardErrorTest {

    @Test
    void during_returnsWhatTheBlockWrote_andPutsTheStreamBack() throws Exception {
        PrintStream before = System.err;
        String written = StandardError.during(() -> {
            System.err.println("first line");
            System.err.print("second, unfinished");
        });
        assertThat(written).isEqualTo("first line" + System.lineSeparator() + "second, unfinished");
        assertThat(System.err).isSameAs(before);
    }

    @Test
    void during_aBlockThatThrows_putsTheStreamBackAndPassesTheExceptionOn() {
        PrintStream before = System.err;
        assertThatThrownBy(() -> StandardError.during(() -> {
                    throw new IllegalStateException("from the block");
                }))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("from the block");
        assertThat(System.err).isSameAs(before);
    }
}
