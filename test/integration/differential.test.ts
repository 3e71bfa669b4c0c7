import {describe, it} from "vitest";
import {proveDifferential} from "../helpers/differentialProof.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();

describe.skipIf(modelPath == null)("differential isolation proof", () => {
    const pairs = 20;
    // Fresh processes, two at a time (two cores). 20 fresh processes: about 30 s on a quiet 2-core machine, several times that under load.
    it(`B's greedy reply and first-token probabilities after A are bit-identical to B in a fresh process (CPU, ${pairs} random pairs)`,
        () => proveDifferential(modelPath!, "off", pairs, {parallelFresh: 2}), 600_000);
    // A few pairs: each A turn with documents evaluates a long prompt.
    it("B's greedy reply after A read documents (one whole, one chunked and retrieved) is bit-identical to B in a fresh process (CPU, 4 random pairs)",
        () => proveDifferential(modelPath!, "off", 4, {parallelFresh: 2, aReadsDocuments: true}), 600_000);
});
