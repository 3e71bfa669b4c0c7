import {LearntPerEndpoint} from "./LearntPerEndpoint.js";

/**
 * Whether each cloud endpoint takes vLLM's `cache_salt` (vLLM from 0.9, SGLang), learnt from the
 * first request that sends one, as `/tokenize` is (`EndpointTokenizerCache`): an endpoint that
 * refused the field with HTTP 400 is not sent it again; one that answered a request carrying it
 * keeps getting it. Keyed by base URL.
 */
export class EndpointCacheSaltSupport extends LearntPerEndpoint {
    /** `true`: it took one; `false`: it refused the field; `undefined`: not known yet. */
    public acceptsCacheSalt(baseURL: string): boolean | undefined {
        return this._known(baseURL);
    }
}
