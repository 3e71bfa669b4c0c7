import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {SharedCloudSimulator} from "../../tools/cloudSim/SharedCloudSimulator.js";
import {runCliCapturing} from "../../tools/spawnCli.js";
import {hermeticCliEnv} from "../helpers/cliEnv.js";

describe("cleanroom settings never-send (the compiled CLI)", () => {
    let sim: SharedCloudSimulator;
    beforeAll(async () => {
        sim = await SharedCloudSimulator.start({mode: "honest", reply: "echo"});
    });
    afterAll(async () => {
        await sim.close();
    });

    /** The CLI on one database of its own; `run` calls `settings never-send …`, `chat` a cloud turn. */
    function cliOn(label: string) {
        const {env, db} = hermeticCliEnv(`never-send-${label}`, {CLEANROOM_CLOUD_API_KEY: "tenant-never-send"});
        return {
            run: (...args: string[]) => runCliCapturing(["settings", "never-send", ...args, "--db", db], {env}),
            chat: (prompt: string) => runCliCapturing(["chat", "--cloud", "--endpoint", sim.url, "--cloud-model", sim.modelName, "--db", db,
                "--conversation", "plans", "--prompt", prompt, "--max-tokens", "32", "--json"], {env})
        };
    }
    const listOf = (stdout: string) => (JSON.parse(stdout) as {neverSend: string[]}).neverSend;

    it("adds, lists and removes phrases, kept in the database; the same phrase in another case or spacing is one entry", async () => {
        const {run} = cliOn("edit");
        expect(await run("list")).toEqual({code: 0, stdout: "The Never send list is empty.\n", stderr: ""});

        const added = await run("add", "Project Falcon", "--json");
        expect(added.code).toBe(0);
        expect(JSON.parse(added.stdout)).toEqual({added: true, neverSend: ["Project Falcon"]});
        expect((await run("add", "Bluebird")).stdout).toBe(
            "Added: the Never send list has 2 phrases. A cloud request holding one of them (any case) is stopped before it is sent.\n");
        const again = await run("add", "  project   FALCON ", "--json");
        expect(again.code).toBe(0);
        expect(JSON.parse(again.stdout)).toEqual({added: false, neverSend: ["Project Falcon", "Bluebird"]});

        expect((await run("list")).stdout).toBe(
            "Never send these (2 phrases). A cloud request holding one of them (any case) is stopped before it is sent.\n  Project Falcon\n  Bluebird\n");
        const removed = await run("remove", "BLUEBIRD", "--json");
        expect(removed.code).toBe(0);
        expect(JSON.parse(removed.stdout)).toEqual({removed: true, neverSend: ["Project Falcon"]});
        expect(listOf((await run("list", "--json")).stdout)).toEqual(["Project Falcon"]);
    });

    it("refuses an empty phrase and the removal of one not in the list, with a clear error that does not repeat the phrase", async () => {
        const {run} = cliOn("refusals");
        const empty = await run("add", "   ", "--json");
        expect(empty.code).toBe(1);
        expect(JSON.parse(empty.stderr).error).toMatchObject({code: "INVALID_INPUT", message: expect.stringContaining("a phrase cannot be empty")});

        const tooLong = await run("add", "x".repeat(201), "--json");
        expect(tooLong.code).toBe(1);
        expect(JSON.parse(tooLong.stderr).error.message).toContain("at most 200 characters");

        const missing = await run("remove", "Operation Nightjar");
        expect(missing.code).toBe(1);
        expect(missing.stderr).toBe("cleanroom: That phrase is not in the Never send list (0 phrases): nothing changed. " +
            "See them with `cleanroom settings never-send list`. [INVALID_INPUT]\n");
        expect(listOf((await run("list", "--json")).stdout)).toEqual([]);
    });

    it("a phrase added here stops a cloud turn that contains it (exit 5), and the server receives nothing", async () => {
        const {run, chat} = cliOn("stops");
        expect((await run("add", "Project Falcon")).code).toBe(0);
        const before = sim.received.length;
        const refused = await chat("What is the budget of project   falcon this year?");
        expect(refused.code).toBe(5);
        expect(JSON.parse(refused.stderr).error).toMatchObject({code: "SECRET_IN_CLOUD_REQUEST", details: {
            count: 1, findings: [{kind: "never-send phrase", kindId: "never-send", where: "the prompt", line: 1, preview: "••••••••"}]
        }});
        expect(refused.stderr.toLowerCase()).not.toContain("falcon");
        expect(sim.received.length).toBe(before);

        // Removed, the same turn goes.
        expect((await run("remove", "project falcon")).code).toBe(0);
        const sent = await chat("What is the budget of project falcon this year?");
        expect(sent.code).toBe(0);
        expect(sim.received.slice(before).some((request) => request.body.includes("project falcon"))).toBe(true);
    });
});
