import fs from "node:fs";
import {describe, expect, it} from "vitest";
import {parseGgufLayout} from "./helpers/ggufLayout.js";
import {makeModelMutant} from "./helpers/modelMutants.js";
import {runModelFuzz, type MutantOutcome} from "./helpers/runModelFuzz.js";
import {SeededRandom} from "./helpers/seededRandom.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();
const mutantCount = Number(process.env.CLEANROOM_FUZZ_COUNT ?? 500);

/**
 * Claim: a damaged or hostile model file is refused with a clear MODEL_* error (or, when the
 * damage is harmless, loads and runs); it never crashes or hangs the core process.
 * Replay a run with CLEANROOM_FUZZ_SEED=<seed printed below>.
 */
describe.skipIf(modelPath == null)("bad models under fuzz", () => {
    it("the mutants are deterministic in (seed, index) and cover every mutation kind", () => {
        const original = fs.readFileSync(modelPath!);
        const layout = parseGgufLayout(original);
        const a = makeModelMutant(original, layout, 99, 7);
        const b = makeModelMutant(original, layout, 99, 7);
        expect(a.detail).toBe(b.detail);
        expect(a.bytes.equals(b.bytes)).toBe(true);
        const kinds = new Set(Array.from({length: 300}, (_, index) => makeModelMutant(original, layout, 99, index).kind));
        expect(kinds.size).toBe(17);
    });

    it("the harness sees a native abort in a worker as a crash on that mutant, and carries on", async () => {
        const report = await runModelFuzz({modelPath: modelPath!, seed: 5, count: 6, lanes: 1, env: {...process.env, CLEANROOM_FUZZ_ABORT_AT: "2"}});
        expect(report.tried).toBe(6);
        expect(report.crashes.map((crash) => crash.index)).toEqual([2]);
        expect(report.crashes[0]!.message).toMatch(/SIGABRT/);
        expect(report.workersStarted).toBe(2);
    });

    it(`${mutantCount} mutants (truncations, header byte flips, absurd counts, lengths, types, dims, offsets, hyperparameters): each refused with a MODEL_* error or loaded; no crash, no hang`, async () => {
        const seed = SeededRandom.runSeed();
        console.info(`[fuzz] seed ${seed} (replay with CLEANROOM_TEST_SEED=${seed}), ${mutantCount} mutants`);
        const report = await runModelFuzz({modelPath: modelPath!, seed, count: mutantCount, lanes: 2, perMutantTimeoutMs: 30_000});

        const tally = new Map<string, number>();
        for (const outcome of report.outcomes) {
            const key = outcome.outcome === "refused" ? `refused ${outcome.code} (${outcome.stage})` : outcome.outcome;
            tally.set(key, (tally.get(key) ?? 0) + 1);
        }
        console.info(`[fuzz] seed ${seed}: inputs tried ${report.tried}, crashes ${report.crashes.length}, hangs ${report.hangs.length}, ` +
            `unexpected errors ${report.unexpected.length}, worker processes ${report.workersStarted}\n` +
            [...tally].map(([key, count]) => `  ${key}: ${count}`).join("\n"));
        const describe = (outcome: MutantOutcome) => `#${outcome.index} ${outcome.kind}: ${outcome.detail} -> ${outcome.outcome} ${outcome.message ?? ""}`;

        expect(report.tried).toBe(mutantCount);
        expect(report.crashes.map(describe), "native crashes").toEqual([]);
        expect(report.hangs.map(describe), "hangs").toEqual([]);
        expect(report.unexpected.map(describe), "errors that are not MODEL_* refusals").toEqual([]);
        for (const outcome of report.outcomes) {
            if (outcome.outcome === "loaded")
                expect(outcome.turn, describe(outcome)).toBe("ok");
            else {
                expect(outcome.outcome, describe(outcome)).toBe("refused");
                expect(outcome.code, describe(outcome)).toMatch(/^MODEL_(NOT_GGUF|TRUNCATED|UNSUPPORTED_ARCHITECTURE|TOO_LARGE_FOR_MEMORY|LOAD_FAILED)$/);
                // A clear message: one sentence or two, plain text, no dump of the file.
                expect(outcome.message!.length, describe(outcome)).toBeLessThan(400);
                expect(outcome.message, describe(outcome)).toMatch(/^[\x20-\x7e]+$/);
            }
        }
        // Most mutants must be caught before llama.cpp sees them.
        expect(report.outcomes.filter((outcome) => outcome.stage === "validate").length).toBeGreaterThan(mutantCount / 2);
    }, 240_000);
});
