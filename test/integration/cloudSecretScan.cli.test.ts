import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {SharedCloudSimulator} from "../../tools/cloudSim/SharedCloudSimulator.js";
import {runCliCapturing} from "../../tools/spawnCli.js";
import {hermeticCliEnv} from "../helpers/cliEnv.js";
import {secretVectors} from "../helpers/secretCorpus.js";

const vectors = secretVectors(5);
const awsKey = vectors.find((vector) => vector.kind === "aws-access-key")!.value;
const card = vectors.find((vector) => vector.label === "Visa test number")!.value;
const prompt = `Why is my deploy failing?\nexport AWS_ACCESS_KEY_ID=${awsKey}\nbilling card ${card}`;

/** Any 8 characters of either value, in anything the CLI printed or the server received. */
function expectNoByteOfTheSecrets(...texts: string[]) {
    const haystack = texts.join("\n");
    for (const value of [awsKey, card])
        for (let at = 0; at + 8 <= value.length; at++)
            expect(haystack.includes(value.slice(at, at + 8)), "a piece of a secret was found").toBe(false);
}

describe("chat --cloud with secrets in the prompt (the compiled CLI against the simulator)", () => {
    let sim: SharedCloudSimulator;
    const cliHomes = new Map<string, ReturnType<typeof hermeticCliEnv>>();
    const home = (conversation: string) => {
        if (!cliHomes.has(conversation))
            cliHomes.set(conversation, hermeticCliEnv(`secret-cli-${conversation}`, {CLEANROOM_CLOUD_API_KEY: "tenant-cli"}));
        return cliHomes.get(conversation)!;
    };
    const run = (conversation: string, ...extra: string[]) => {
        const {env, db} = home(conversation);
        return runCliCapturing(["chat", "--cloud", "--endpoint", sim.url, "--cloud-model", sim.modelName, "--db", db,
            "--conversation", conversation, "--prompt", prompt, "--max-tokens", "64", ...extra], {env});
    };
    const storedConversations = async (conversation: string) => {
        const {env, db} = home(conversation);
        const listed = await runCliCapturing(["conversations", "list", "--db", db, "--json"], {env});
        expect(listed.code).toBe(0);
        return (JSON.parse(listed.stdout) as {conversations: Array<{id: string, title: string}>}).conversations;
    };
    beforeAll(async () => {
        sim = await SharedCloudSimulator.start({mode: "honest", reply: "echo"});
    });
    afterAll(async () => {
        await sim.close();
    });

    it("exits 5 with SECRET_IN_CLOUD_REQUEST and the findings in the JSON, never the values; the server receives nothing", async () => {
        const received = sim.received.length;
        const {code, stdout, stderr} = await run("json", "--json");
        expect(code).toBe(5);
        expect(stdout).toBe("");
        const {error} = JSON.parse(stderr) as {error: {code: string, details: {count: number, findings: unknown[]}}};
        expect(error.code).toBe("SECRET_IN_CLOUD_REQUEST");
        expect(error.details.findings).toEqual([
            {kind: "AWS access key", kindId: "aws-access-key", where: "the prompt", message: 1, role: "user", line: 2, preview: `${awsKey.slice(0, 4)}…${awsKey.slice(-4)}`},
            {kind: "payment card number", kindId: "card-number", where: "the prompt", message: 1, role: "user", line: 3, preview: "•••• 1111"}
        ]);
        expect(sim.received.length).toBe(received);
        expectNoByteOfTheSecrets(stdout, stderr);
        // The refused first turn created nothing: no conversation titled with the prompt's first words.
        expect(await storedConversations("json")).toEqual([]);
    });

    it("a first turn whose request fails leaves no conversation behind either; a second turn's failure keeps the first", async () => {
        const {env, db} = home("failed");
        const dead = await SharedCloudSimulator.start({mode: "honest"});
        const deadUrl = dead.url;
        await dead.close();
        const failing = (conversation: string) => runCliCapturing(["chat", "--cloud", "--endpoint", deadUrl, "--cloud-model", sim.modelName, "--db", db,
            "--conversation", conversation, "--prompt", "How do tides work?", "--max-tokens", "16", "--json"], {env});

        const failed = await failing("failed");
        expect(failed.code).not.toBe(0);
        expect(JSON.parse(failed.stderr).error.code).toBe("CLOUD_REQUEST_FAILED");
        expect(await storedConversations("failed")).toEqual([]);

        const answered = await runCliCapturing(["chat", "--cloud", "--endpoint", sim.url, "--cloud-model", sim.modelName, "--db", db,
            "--conversation", "failed", "--prompt", "How do tides work?", "--max-tokens", "16", "--json"], {env});
        expect(answered.code).toBe(0);
        expect(await failing("failed")).toMatchObject({code: failed.code});
        const [kept] = await storedConversations("failed");
        expect(kept).toMatchObject({id: "failed"});
        const shown = await runCliCapturing(["conversations", "show", "failed", "--db", db, "--json"], {env});
        expect((JSON.parse(shown.stdout) as {messages: unknown[]}).messages).toHaveLength(2);
    });

    it("without --json it lists each finding with its masked preview and says how to send anyway", async () => {
        const {code, stdout, stderr} = await run("text");
        expect(code).toBe(5);
        expect(stderr).toMatch(/^cleanroom: Not sent to the cloud: this request holds 2 likely secrets: AWS access key \(the prompt, line 2\)/);
        expect(stderr).toContain(`AWS access key: the prompt, line 2: ${awsKey.slice(0, 4)}…${awsKey.slice(-4)} (--allow-secret aws-access-key)`);
        expect(stderr).toContain("--redact-secrets");
        expectNoByteOfTheSecrets(stdout, stderr);
    });

    it("--redact-secrets sends placeholders (no byte of the values reaches the server) and prints the reply with the values back", async () => {
        const before = sim.received.length;
        const {code, stdout, stderr} = await run("redact", "--redact-secrets", "--json");
        expect(stderr).toBe("");
        expect(code).toBe(0);
        const result = JSON.parse(stdout) as {reply: string, secrets: {redacted: Array<{kind: string, preview: string}>, allowed: unknown[]}};
        expect(result.reply).toContain(`You said: ${prompt}`);
        expect(result.secrets.redacted.map((finding) => finding.kind)).toEqual(["AWS access key", "payment card number"]);
        expect(result.secrets.allowed).toEqual([]);
        const bodies = sim.received.slice(before).map((request) => request.body);
        expect(bodies.join("\n")).toContain("export AWS_ACCESS_KEY_ID=[AWS access key 1]\\nbilling card [payment card number 1]");
        expectNoByteOfTheSecrets(...bodies);
    });

    it("--allow-secret lets the named kinds through as they are; an unknown kind is refused before anything runs", async () => {
        const before = sim.received.length;
        const allowed = await run("allow", "--allow-secret", "aws-access-key", "--allow-secret", "payment card number", "--json");
        expect(allowed.code).toBe(0);
        expect(sim.received.slice(before).some((request) => request.body.includes(awsKey) && request.body.includes(card))).toBe(true);

        const unknown = await run("unknown", "--allow-secret", "aws", "--json");
        expect(unknown.code).toBe(1);
        expect(JSON.parse(unknown.stderr).error).toMatchObject({code: "INVALID_INPUT", message: expect.stringMatching(/--allow-secret "aws" is refused/)});
    });
});
