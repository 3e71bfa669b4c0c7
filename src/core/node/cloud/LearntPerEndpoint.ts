/**
 * A yes-or-no fact about each cloud endpoint (does it offer `/tokenize`, does it take
 * `cache_salt`?), learnt from a definite answer and remembered per endpoint so that it is not
 * asked again on every turn. An endpoint not answered definitely yet is `undefined`.
 */
export class LearntPerEndpoint {
    private readonly _facts = new Map<string, boolean>();

    protected _known(endpoint: string): boolean | undefined {
        return this._facts.get(endpoint);
    }

    public remember(endpoint: string, fact: boolean) {
        this._facts.set(endpoint, fact);
    }
}
