import net from "node:net";
import {afterEach, describe, expect, it} from "vitest";
import {runCliCapturing} from "../../tools/spawnCli.js";
import {hermeticCliEnv} from "../helpers/cliEnv.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();
let blocker: net.Server | null = null;

afterEach(async () => {
    await new Promise((resolve) => blocker?.close(resolve) ?? resolve(undefined));
    blocker = null;
});

describe.skipIf(modelPath == null)("cleanroom serve on a port another program holds", () => {
    it("says which port is taken and what to do, prints no URL, and exits 1", async () => {
        blocker = net.createServer();
        await new Promise<void>((resolve, reject) => blocker!.once("error", reject).listen(0, "127.0.0.1", resolve));
        const port = (blocker.address() as net.AddressInfo).port;
        const {env, db} = hermeticCliEnv("serve-port-taken");

        const refused = await runCliCapturing(["serve", "--port", String(port), "--model", modelPath!, "--db", db, "--threads", "1"], {env});
        expect(refused.code).toBe(1);
        expect(refused.stdout).toBe("");
        expect(refused.stderr).toBe(`cleanroom: Port ${port} on 127.0.0.1 is already in use by another program: choose another with --port (0 picks a free one). [PORT_IN_USE]\n`);
    });
});
