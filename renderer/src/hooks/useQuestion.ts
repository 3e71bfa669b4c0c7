import {useCallback, useRef, useState} from "react";

/**
 * A question a dialog asks: `ask` opens it with what to show and resolves with the user's answer
 * once they give it; `pending` is what the dialog shows while it is open. One question at a time:
 * asking again while one is open answers the older one `unanswered`.
 */
export function useQuestion<Shown, Answer>(unanswered: Answer) {
    const [pending, setPending] = useState<Shown | null>(null);
    const answerRef = useRef<((answer: Answer) => void) | null>(null);

    const ask = useCallback((shown: Shown) => new Promise<Answer>((resolve) => {
        answerRef.current?.(unanswered);
        answerRef.current = resolve;
        setPending(shown);
    }), [unanswered]);

    const answer = useCallback((given: Answer) => {
        const resolve = answerRef.current;
        answerRef.current = null;
        setPending(null);
        resolve?.(given);
    }, []);

    return {pending, ask, answer};
}
