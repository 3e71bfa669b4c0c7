import {ibanLengths, ibanValid, luhnValid} from "./checksums.js";
import type {SecretMatch} from "./types.js";

/**
 * Cleanroom's own rules, for what secretlint's recommended preset has no rule for, each with a
 * checksum where one exists: armored private keys the preset's rule misses, Stripe keys, JWTs (a header and payload that
 * decode to JSON, the header with `alg`), `.env`-style
 * `PASSWORD=` / `SECRET=` / `TOKEN=` / `API_KEY=` lines with a non-trivial value, payment card
 * numbers (Luhn, a card network's prefix, 13 to 19 digits as printed on cards), IBANs (the
 * country's length and mod 97), and the user's own "Never send these" words and phrases.
 */
export function findOwnSecrets(text: string, neverSend?: NeverSendMatcher | null): SecretMatch[] {
    return [...findArmoredPrivateKeys(text), ...findStripeKeys(text), ...findJwts(text), ...findEnvSecrets(text), ...findCardNumbers(text), ...findIbans(text), ...(neverSend?.find(text) ?? [])];
}

const armoredPrivateKeyPattern = /-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK)?-----[\s\S]{40,65536}?-----END \1PRIVATE KEY\2-----/g;

/**
 * Armored private keys of any type: PEM (`RSA`, `EC`, `ENCRYPTED`, PKCS#8…), OpenSSH and PGP
 * (`PRIVATE KEY BLOCK`), with a key's worth of text between header and footer. The preset's own
 * rule takes only base64 starting as a long DER sequence or an OpenSSH key: it misses P-256 EC
 * keys (`MHcC…`), PGP blocks and encrypted keys.
 */
export function findArmoredPrivateKeys(text: string): SecretMatch[] {
    return [...text.matchAll(armoredPrivateKeyPattern)].map((match) => ({kind: "private-key" as const, start: match.index, end: match.index + match[0].length}));
}

const stripeKeyPattern = /(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{24,247}(?![A-Za-z0-9_])/g;

/** Stripe secret and restricted keys (`sk_live_…`, `rk_test_…`). */
export function findStripeKeys(text: string): SecretMatch[] {
    return [...text.matchAll(stripeKeyPattern)]
        .filter((match) => !/_(.)\1*$/.test(match[0])) // sk_test_xxxxxxxx…: a placeholder
        .map((match) => ({kind: "stripe-key" as const, start: match.index, end: match.index + match[0].length}));
}

const jwtPattern = /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*/g;

export function findJwts(text: string): SecretMatch[] {
    const found: SecretMatch[] = [];
    for (const match of text.matchAll(jwtPattern)) {
        const [header, payload] = match[0].split(".");
        if (typeof decodeJsonObject(header!)?.alg === "string" && decodeJsonObject(payload!) != null)
            found.push({kind: "jwt", start: match.index, end: match.index + match[0].length});
    }
    return found;
}

function decodeJsonObject(base64Url: string): Record<string, unknown> | null {
    try {
        const base64 = base64Url.replace(/-/g, "+").replace(/_/g, "/");
        const binary = atob(base64 + "=".repeat((4 - base64.length % 4) % 4));
        const value: unknown = JSON.parse(new TextDecoder("utf-8", {fatal: true}).decode(Uint8Array.from(binary, (char) => char.charCodeAt(0))));
        return typeof value === "object" && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : null;
    } catch {
        return null;
    }
}

const envLinePattern = /^[ \t]*(?:export[ \t]+)?([A-Z][A-Z0-9_]*)[ \t]*=[ \t]*(.*)$/gm;
const secretNamePattern = /(?:^|_)(?:PASSWORD|PASSWD|PASSPHRASE|PASS|SECRET|TOKEN|CREDENTIALS?|(?:API|ACCESS|SECRET|PRIVATE|AUTH|MASTER|ENCRYPTION|SIGNING)_?KEY)$/;
const placeholderPattern =
    /^(?:x+|\*+|\.+|…+|-+|changeme|change[_-]me|replace[_-]?me.*|your[_-].*|my[_-].*|example.*|.*[_-]example|placeholder|secret|password|token|none|null|undefined|true|false|redacted|dummy|todo|tbd)$/i;

/** `NAME=value` lines whose name says password, secret, token or key, with a value that is not a placeholder or a reference. */
export function findEnvSecrets(text: string): SecretMatch[] {
    const found: SecretMatch[] = [];
    for (const match of text.matchAll(envLinePattern)) {
        if (!secretNamePattern.test(match[1]!))
            continue;
        const raw = match[2]!;
        const rawStart = match.index + match[0].length - raw.length;
        const quote = raw[0] === "\"" || raw[0] === "'" ? raw[0] : null;
        let value: string;
        let offset: number;
        if (quote != null) {
            const close = raw.indexOf(quote, 1);
            if (close < 0)
                continue;
            value = raw.slice(1, close);
            offset = 1;
        } else {
            value = raw.replace(/[ \t]+#.*$/, "").trimEnd();
            offset = 0;
            if (/\s/.test(value) || /[()[\]{}]/.test(value) || /^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$/.test(value))
                continue; // prose or code, not a value
        }
        if (nonTrivialSecretValue(value))
            found.push({kind: "env-secret", start: rawStart + offset, end: rawStart + offset + value.length});
    }
    return found;
}

function nonTrivialSecretValue(value: string) {
    if (value.length < 8 || placeholderPattern.test(value) || /^(.)\1*$/.test(value))
        return false;
    if (/^\$|\$\{|\{\{|^%\w+%$|^<.*>$/.test(value))
        return false; // a reference to a variable, or a template
    const classes = [/[a-z]/, /[A-Z]/, /[0-9]/, /[^A-Za-z0-9_\s]/].filter((pattern) => pattern.test(value)).length;
    return classes >= 2;
}

/** As printed: 13 to 19 digits together, or in groups of four (4-6-5 and 4-6-4 for Amex and Diners) split by one space or dash each. */
const cardPattern = /(?<![\w.,-])(?:\d{13,19}|\d{4}([ -])\d{4}\1\d{4}\1\d{1,4}(?:\1\d{1,3})?|\d{4}([ -])\d{6}\2\d{4,5})(?![\w-]|[.,]\d)/g;

export function findCardNumbers(text: string): SecretMatch[] {
    const found: SecretMatch[] = [];
    for (const match of text.matchAll(cardPattern)) {
        const digits = match[0].replace(/[ -]/g, "");
        if (digits.length >= 13 && digits.length <= 19 && cardNetworkPrefix(digits) && luhnValid(digits) && !/^(\d)\1+$/.test(digits))
            found.push({kind: "card-number", start: match.index, end: match.index + match[0].length});
    }
    return found;
}

/** A prefix some card network issues (Visa 4, Mastercard 51-55 and 2221-2720, Amex, Diners and JCB 30-39, Maestro 50-69, Discover and UnionPay 6). */
function cardNetworkPrefix(digits: string) {
    const two = Number(digits.slice(0, 2));
    const four = Number(digits.slice(0, 4));
    return digits[0] === "4" || (two >= 30 && two <= 39) || (two >= 50 && two <= 69) || (four >= 2221 && four <= 2720);
}

const ibanStartPattern = /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?= ?[A-Z0-9])/g;

/** IBANs written together or in groups split by single spaces, upper case. */
export function findIbans(text: string): SecretMatch[] {
    const found: SecretMatch[] = [];
    for (const match of text.matchAll(ibanStartPattern)) {
        const length = ibanLengths[match[0].slice(0, 2)];
        if (length == null)
            continue;
        let compact = match[0];
        let at = match.index + 4;
        while (compact.length < length && at < text.length) {
            const char = text[at]!;
            if (char === " " && text[at - 1] !== " ")
                at++;
            else if (/[A-Z0-9]/.test(char)) {
                compact += char;
                at++;
            } else
                break;
        }
        if (compact.length === length && !/[A-Za-z0-9]/.test(text[at] ?? "") && ibanValid(compact))
            found.push({kind: "iban", start: match.index, end: at});
    }
    return found;
}

/** The user's "Never send these" words and phrases: any case, whole words, any whitespace between a phrase's words. */
export class NeverSendMatcher {
    private readonly _pattern: RegExp | null;

    public constructor(phrases: readonly string[]) {
        const alternatives = phrases
            .map((phrase) => phrase.trim())
            .filter((phrase) => phrase !== "")
            .sort((a, b) => b.length - a.length)
            .map((phrase) => {
                const body = phrase.split(/\s+/).map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("\\s+");
                const wordStart = /^[\p{L}\p{N}_]/u.test(phrase) ? "(?<![\\p{L}\\p{N}_])" : "";
                const wordEnd = /[\p{L}\p{N}_]$/u.test(phrase) ? "(?![\\p{L}\\p{N}_])" : "";
                return `${wordStart}${body}${wordEnd}`;
            });
        this._pattern = alternatives.length > 0 ? new RegExp(alternatives.join("|"), "giu") : null;
    }

    public find(text: string): SecretMatch[] {
        if (this._pattern == null)
            return [];
        return [...text.matchAll(this._pattern)].map((match) => ({kind: "never-send" as const, start: match.index, end: match.index + match[0].length}));
    }
}
