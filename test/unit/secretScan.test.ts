import {describe, expect, it} from "vitest";
import {isCleanroomError, SecretInCloudRequestError} from "../../src/core/common/errors.js";
import {PlaceholderRestorer} from "../../src/core/common/secretScan/PlaceholderRestorer.js";
import {findSecretKind, secretKinds} from "../../src/core/common/secretScan/secretKinds.js";
import {CloudSecretsOptionsSchema} from "../../src/core/common/secretScan/types.js";
import {SecretScanner} from "../../src/core/node/cloud/secrets/SecretScanner.js";
import {screenCloudRequest} from "../../src/core/node/cloud/secrets/screenCloudRequest.js";
import type {CloudChatMessage} from "../../src/core/node/cloud/CloudClient.js";
import {honestCorpus} from "../helpers/honestCorpus.js";
import {neverSendVectors, secretVectors} from "../helpers/secretCorpus.js";
import {testSeed} from "../helpers/testSeed.js";

const scanner = new SecretScanner();
const seed = testSeed("secret scan");
const vectors = secretVectors(seed);

/** A request as a cloud turn sends it: a system prompt, a bit of history, the prompt holding `text`. */
function request(text: string): CloudChatMessage[] {
    return [
        {role: "system", content: "You are a helpful, honest assistant."},
        {role: "user", content: "Can you look at my setup?"},
        {role: "assistant", content: "Sure, paste it here."},
        {role: "user", content: `Here it is:\n${text}\nWhat is wrong with it?`}
    ];
}

describe("the scan of cloud requests for secrets", () => {
    it("finds every real-format fake secret, of every kind, and redacting leaves no byte of any value (recall printed per kind)", async () => {
        expect(new Set(vectors.map((vector) => vector.kind))).toEqual(new Set(secretKinds.map((kind) => kind.id)));
        const perKind = new Map<string, {found: number, total: number, missed: string[]}>();
        for (const vector of vectors) {
            const messages = request(vector.text);
            const prompt = messages.at(-1)!.content;
            const at = prompt.indexOf(vector.text);
            const [found] = (await scanner.scan([prompt], neverSendVectors));
            const hit = found!.some((match) => match.kind === vector.kind && match.start < at + vector.text.length && match.end > at);
            const redacted = await screenCloudRequest(messages, {scanner, neverSend: neverSendVectors, options: {redact: true}});
            const leaked = redacted.messages.some((message) => message.content.toLowerCase().includes(vector.value.toLowerCase()));
            const entry = perKind.get(vector.kind) ?? {found: 0, total: 0, missed: []};
            entry.total++;
            if (hit && !leaked)
                entry.found++;
            else
                entry.missed.push(`${vector.label}${hit ? " (found, but its value was left in the redacted text)" : ""}`);
            perKind.set(vector.kind, entry);
        }
        console.info("[secret scan] recall per kind:\n" + [...perKind].map(([kind, {found, total, missed}]) =>
            `  ${kind.padEnd(18)} ${found}/${total} (${(100 * found / total).toFixed(0)}%)${missed.length > 0 ? ` missed: ${missed.join("; ")}` : ""}`).join("\n"));
        const missed = [...perKind].flatMap(([kind, {missed: labels}]) => labels.map((label) => `${kind}: ${label}`));
        expect(missed).toEqual([]);
    });

    it("the honest corpus (this project's docs and sources, prose in eight languages, code, near-miss numbers) triggers nothing (false positives printed)", async () => {
        const corpus = honestCorpus(seed);
        const falsePositives: string[] = [];
        let characters = 0;
        for (const {label, text} of corpus) {
            characters += text.length;
            const [found] = await scanner.scan([text]);
            for (const match of found!) {
                const line = text.slice(0, match.start).split("\n").length;
                falsePositives.push(`${label}:${line} ${match.kind} "${text.slice(match.start, match.end).slice(0, 60)}"`);
            }
        }
        console.info(`[secret scan] honest corpus: ${corpus.length} texts, ${characters.toLocaleString("en-US")} characters, ` +
            `${falsePositives.length} false positives${falsePositives.length > 0 ? `:\n  ${falsePositives.join("\n  ")}` : ""}`);
        expect(falsePositives).toEqual([]);
    });

    it("a request holding secrets is refused with each one's kind, place and masked preview, and no value anywhere in the error", async () => {
        const aws = vectors.find((vector) => vector.kind === "aws-access-key")!.value;
        const card = vectors.find((vector) => vector.label === "Visa test number")!.value;
        const messages: CloudChatMessage[] = [
            {role: "system", content: `Deploy with ${aws}.`},
            {role: "user", content: "first question"},
            {role: "assistant", content: `noted\nyour card ${card} is on file`},
            {role: "user", content: "line one\nline two mentions project falcon"}
        ];
        const error = await screenCloudRequest(messages, {scanner, neverSend: ["Project Falcon"]}).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(SecretInCloudRequestError);
        const wire = (error as SecretInCloudRequestError).toWire();
        expect(isCleanroomError(wire, "SECRET_IN_CLOUD_REQUEST")).toBe(true);
        expect(wire.details.findings).toEqual([
            {kind: "AWS access key", kindId: "aws-access-key", where: "the system prompt", message: 0, role: "system", line: 1, preview: `${aws.slice(0, 4)}…${aws.slice(-4)}`},
            {kind: "payment card number", kindId: "card-number", where: "history message 2", message: 2, role: "assistant", line: 2, preview: "•••• 1111"},
            {kind: "never-send phrase", kindId: "never-send", where: "the prompt", message: 3, role: "user", line: 2, preview: "••••••••"}
        ]);
        expect(wire.message).toMatch(/^Not sent to the cloud: this request holds 3 likely secrets: AWS access key \(the system prompt, line 1\), /);
        const everything = JSON.stringify(wire) + String((error as Error).stack);
        for (const value of [aws, card, card.slice(0, 8), aws.slice(4, 16), "falcon"])
            expect(everything.toLowerCase()).not.toContain(value.toLowerCase());
    });

    it("redacts each value to a typed placeholder, the same value to the same one everywhere, and puts values back in a reply streamed in any pieces", async () => {
        const token = vectors.find((vector) => vector.kind === "github-token")!.value;
        const other = vectors.filter((vector) => vector.kind === "github-token")[1]!.value;
        const screened = await screenCloudRequest([
            {role: "user", content: `token ${token}`},
            {role: "assistant", content: "ok"},
            {role: "user", content: `${other} and again ${token}`}
        ], {scanner, options: {redact: true}});
        expect(screened.messages.map((message) => message.content)).toEqual(["token [GitHub token 1]", "ok", "[GitHub token 2] and again [GitHub token 1]"]);
        expect(screened.redacted.map((finding) => finding.where)).toEqual(["history message 1", "the prompt", "the prompt"]);

        const reply = "Rotate [GitHub token 1] now; [GitHub token 2] too. [Not a placeholder] stays, as does [GitHub token 3].";
        const expected = `Rotate ${token} now; ${other} too. [Not a placeholder] stays, as does [GitHub token 3].`;
        expect(screened.restorer.restore(reply)).toBe(expected);
        for (const size of [1, 2, 3, 5, 7, 16]) {
            const restorer = new PlaceholderRestorer(new Map([["[GitHub token 1]", token], ["[GitHub token 2]", other]]));
            let shown = "";
            for (let at = 0; at < reply.length; at += size)
                shown += restorer.feed(reply.slice(at, at + size));
            expect(shown + restorer.finish()).toBe(expected);
        }
    });

    it("lets through only the kinds a turn allows; an unknown kind is refused by the API's schema, a name is read as its kind", async () => {
        const jwt = vectors.find((vector) => vector.kind === "jwt")!.value;
        const iban = vectors.find((vector) => vector.kind === "iban")!.value;
        const messages: CloudChatMessage[] = [{role: "user", content: `${jwt}\n${iban}`}];
        const options = CloudSecretsOptionsSchema.parse({allow: [findSecretKind("JSON Web Token")]});
        expect(options.allow).toEqual(["jwt"]);
        await expect(screenCloudRequest(messages, {scanner, options})).rejects.toMatchObject({code: "SECRET_IN_CLOUD_REQUEST", details: {count: 1}});
        const screened = await screenCloudRequest(messages, {scanner, options: {allow: ["jwt", "iban"]}});
        expect(screened.messages).toEqual(messages);
        expect(screened.allowed.map((finding) => finding.kindId)).toEqual(["jwt", "iban"]);
        expect(CloudSecretsOptionsSchema.safeParse({allow: ["aws"]}).success).toBe(false);
    });

    it("a pasted secretlint-disable comment does not switch the scan off", async () => {
        const token = vectors.find((vector) => vector.kind === "npm-token")!.value;
        const [found] = await scanner.scan([`// secretlint-disable\nconst token = "${token}"; // secretlint-disable-line\n`]);
        expect(found!.map((match) => match.kind)).toEqual(["npm-token"]);
    });

    it("scanning leaves nothing behind: no secretlint profiling marks pile up in the process's performance timeline, however many requests", async () => {
        const secretlintMarks = () => performance.getEntriesByType("mark").filter((entry) => entry.name.startsWith("@core>")).length;
        const before = secretlintMarks();
        for (let index = 0; index < 200; index++)
            await scanner.scan([`request ${index}: ${vectors[index % vectors.length]!.value}`]);
        // Let a PerformanceObserver run, as it would between two requests of a live core.
        await new Promise((resolve) => setImmediate(resolve));
        expect(secretlintMarks() - before).toBe(0);
    });
});
