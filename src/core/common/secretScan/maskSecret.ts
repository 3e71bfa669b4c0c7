import type {SecretKindId} from "./secretKinds.js";

const hidden = "••••••••";
/** Values shorter than this are shown fully masked: 8 characters of 16 would say too much. */
const shortestShownEnds = 16;

/**
 * What a person may be shown of a secret: never the value. A long token its first and last 4
 * characters (`AKIA…XYZ4`), a private key its header line, a card number its last 4 digits;
 * passwords, the user's own phrases and short values nothing (`••••••••`, whatever their length).
 */
export function maskSecret(value: string, kind: SecretKindId): string {
    if (kind === "private-key")
        return `${value.split(/\r?\n|\\n/)[0]!.slice(0, 60)}…`;
    if (kind === "card-number")
        return `•••• ${value.replace(/\D/g, "").slice(-4)}`;
    if (kind === "never-send" || kind === "env-secret" || value.length < shortestShownEnds)
        return hidden;
    return `${value.slice(0, 4)}…${value.slice(-4)}`;
}
