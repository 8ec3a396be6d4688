package io.distlock.kit;

import io.distlock.Capabilities;
import java.util.Optional;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.platform.commons.support.AnnotationSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Evaluates {@link Requires} before a kit test runs: a test whose need the backend does not meet is disabled with the
 * reason (so JUnit and the build report it as skipped, reason included), and the reason is logged. The backend's
 * capabilities are read once per test class.
 */
final class KitConditions implements ExecutionCondition {

    private static final Logger log = LoggerFactory.getLogger(KitConditions.class);
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(KitConditions.class);

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        Optional<Requires> requires = AnnotationSupport.findAnnotation(context.getElement(), Requires.class);
        Optional<Object> instance = context.getTestInstance();
        if (requires.isEmpty() || instance.isEmpty() || !(instance.get() instanceof LockerFixture fixture)) {
            return ConditionEvaluationResult.enabled("no kit requirement to check");
        }
        Capabilities capabilities = context.getParent()
                .orElse(context)
                .getStore(NAMESPACE)
                .getOrComputeIfAbsent("capabilities", k -> Lockers.capabilities(fixture), Capabilities.class);
        for (Need need : requires.get().value()) {
            Optional<String> missing = need.missing(fixture, capabilities);
            if (missing.isPresent()) {
                log.warn(
                        "Skipped {}.{}: {}",
                        instance.get().getClass().getSimpleName(),
                        context.getDisplayName(),
                        missing.get());
                return ConditionEvaluationResult.disabled(missing.get());
            }
        }
        return ConditionEvaluationResult.enabled(
                "the backend meets " + java.util.Arrays.toString(requires.get().value()));
    }
}
