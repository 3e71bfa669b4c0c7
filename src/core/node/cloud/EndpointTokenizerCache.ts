import {LearntPerEndpoint} from "./LearntPerEndpoint.js";

/**
 * Whether each cloud endpoint offers a tokenizer (`POST /tokenize`, as llama.cpp's
 * llama-server and the simulator do), learnt from the first count and remembered per endpoint,
 * so that an endpoint without one is not asked again on every turn. Only definite answers are
 * kept (a token list, or a 404/405/501-like refusal); a failure that may pass (network, 5xx,
 * 401) leaves the endpoint unknown.
 */
export class EndpointTokenizerCache extends LearntPerEndpoint {
    /** `true`: it has one; `false`: it has none; `undefined`: not known yet. */
    public offersTokenizer(tokenizeUrl: string): boolean | undefined {
        return this._known(tokenizeUrl);
    }
}
