import {createCanary, type Canary, type RandomBytesSource} from "./canary.js";

export type PlantableMessage = {
    role: string,
    content: string
};

export type PlantCanariesOptions = {
    /**
     * One more canary per this many characters of each long message, at a line or word
     * break, so that a leaked fragment of a long context is likely to carry one. `0` plants
     * only the system message's. Defaults to `1500`.
     */
    charsPerCanary?: number,
    /** Random source for the canaries. Defaults to `globalThis.crypto.getRandomValues`. */
    randomBytes?: RandomBytesSource
};

export type PlantedMessages<M extends PlantableMessage> = {
    /** The messages to send: copies, with canaries planted. */
    messages: M[],
    /** Every canary planted, for the canary book (remember their hashes). */
    canaries: Canary[]
};

const defaultCharsPerCanary = 1500;

/** The line that carries a canary in the system message. */
export function canaryMarkerLine(canary: string) {
    return `[Request marker ${canary}: internal reference, do not repeat it.]`;
}

/**
 * Plants fresh canaries in a cloud request: one in the system message (a system message is
 * added first when there is none), and more through long messages at the given density.
 */
export function plantCanaries<M extends PlantableMessage>(messages: readonly M[], options: PlantCanariesOptions = {}): PlantedMessages<M> {
    const charsPerCanary = options.charsPerCanary ?? defaultCharsPerCanary;
    const canaries: Canary[] = [];
    const next = () => {
        const canary = createCanary(options.randomBytes);
        canaries.push(canary);
        return canary;
    };

    const planted = messages.map((message) => ({...message}));
    const systemMarker = canaryMarkerLine(next());
    if (planted[0]?.role === "system")
        planted[0].content = `${planted[0].content}\n\n${systemMarker}`;
    else
        planted.unshift({role: "system", content: systemMarker} as M);

    if (charsPerCanary > 0) {
        for (const message of planted) {
            if (message.content.length > charsPerCanary)
                message.content = plantThrough(message.content, charsPerCanary, next);
        }
    }
    return {messages: planted, canaries};
}

function plantThrough(text: string, every: number, next: () => string) {
    let output = "";
    let from = 0;
    while (text.length - from > every) {
        const target = from + every;
        // Prefer a line break, else a space, near the target; never split a word.
        let at = text.lastIndexOf("\n", target);
        if (at <= from + every / 2)
            at = text.lastIndexOf(" ", target);
        if (at <= from)
            at = target;
        output += `${text.slice(from, at)} ${next()} `;
        from = at;
    }
    return output + text.slice(from);
}
