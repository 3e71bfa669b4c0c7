import type {AddressClass} from "./classifyAddress.js";
import {ModelDownloadError} from "./ModelDownloadError.js";

/** Why the download policy refused a URL. */
export type DownloadUrlRefusal =
    /** Not https (http only to loopback, and only when the policy allows loopback). */
    | {reason: "scheme", scheme: string}
    /** The host is, or resolves to, an address outside the public internet. */
    | {reason: "address", addressClass: AddressClass}
    /** More redirects than the policy follows. */
    | {reason: "too-many-redirects", maxRedirects: number}
    /** A redirect without a usable Location. */
    | {reason: "bad-redirect"}
    /** Not a URL at all. */
    | {reason: "malformed"};

const addressWords: Record<AddressClass, string> = {
    "public": "a public address",
    "loopback": "this machine (loopback)",
    "private": "a private network address",
    "shared": "a carrier-grade NAT address (100.64.0.0/10)",
    "link-local": "a link-local address",
    "unique-local": "a unique local IPv6 address",
    "unspecified": "the unspecified address",
    "multicast": "a multicast address",
    "reserved": "a reserved address",
    "invalid": "no valid address"
};

/**
 * A download the URL policy refused before connecting: what a page (or a compromised renderer)
 * names must not reach this machine's services or the user's network. The message names the
 * kind of address, never the address itself.
 */
export class DownloadUrlRefusedError extends ModelDownloadError {
    public override readonly code = "DOWNLOAD_URL_REFUSED";
    public readonly refusal: DownloadUrlRefusal;

    /** `hop`: 0 for the URL asked for, n for the n-th redirect. */
    public constructor(url: string, host: string, hop: number, refusal: DownloadUrlRefusal) {
        const where = hop === 0 ? `${host}` : `${host} (redirect ${hop})`;
        const why = {
            "scheme": () => `only https:// is downloaded from, not ${(refusal as {scheme: string}).scheme}`,
            "address": () => `${where} is ${addressWords[(refusal as {addressClass: AddressClass}).addressClass]}, which downloads never reach`,
            "too-many-redirects": () => `it redirected more than ${(refusal as {maxRedirects: number}).maxRedirects} times`,
            "bad-redirect": () => `${where} answered a redirect without a usable Location`,
            "malformed": () => "it is not a valid URL"
        }[refusal.reason]();
        super("DOWNLOAD_URL_REFUSED", `The download was refused: ${why}. Nothing was downloaded.`,
            {url, host, hop, ...refusal});
        this.name = "DownloadUrlRefusedError";
        this.refusal = refusal;
    }
}
