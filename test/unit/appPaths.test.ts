import os from "node:os";
import path from "node:path";
import {afterEach, describe, expect, it} from "vitest";
import {appDataDir, defaultDatabasePath, defaultModelsDir, machineFactsDir} from "../../src/core/node/paths/appPaths.js";
import {setEnvForTest} from "../helpers/setEnvForTest.js";

describe.runIf(process.platform === "linux")("app data paths (one module, env-paths)", () => {
    const restores: Array<() => void> = [];
    afterEach(() => restores.splice(0).reverse().forEach((restore) => restore()));
    const env = (name: string, value: string) => restores.push(setEnvForTest(name, value));

    it("follow CLEANROOM_HOME first: the database and the models folder below it", () => {
        env("CLEANROOM_HOME", "/data/cr");
        expect(appDataDir()).toBe("/data/cr");
        expect(defaultDatabasePath()).toBe("/data/cr/cleanroom.db");
        expect(defaultModelsDir()).toBe("/data/cr/models");
    });

    it("keep the machine's facts (GPU probe, binary tests) in CLEANROOM_CACHE_DIR when set, else in the data folder", () => {
        env("CLEANROOM_HOME", "/data/cr");
        env("CLEANROOM_CACHE_DIR", "");
        expect(machineFactsDir()).toBe("/data/cr");
        env("CLEANROOM_CACHE_DIR", "/var/cache/cr");
        expect(machineFactsDir()).toBe("/var/cache/cr");
        expect(appDataDir()).toBe("/data/cr");
    });

    it("else $XDG_DATA_HOME/cleanroom, and ~/.local/share/cleanroom when it is unset, empty or relative", () => {
        env("CLEANROOM_HOME", "");
        env("XDG_DATA_HOME", "/xdg");
        expect(defaultModelsDir()).toBe("/xdg/cleanroom/models");
        const fallback = path.join(os.homedir(), ".local", "share", "cleanroom");
        for (const value of ["", "relative/data"]) {
            env("XDG_DATA_HOME", value);
            expect(appDataDir()).toBe(fallback);
        }
    });
});
