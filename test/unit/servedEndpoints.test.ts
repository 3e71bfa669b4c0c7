import fs from "node:fs";
import path from "node:path";
import {describe, expect, it} from "vitest";
import type {Core} from "../../src/core/node/Core.js";
import {ApiKeyRing} from "../../src/serve/ApiKeyRing.js";
import {createApiApp} from "../../src/serve/createApiApp.js";
import {describeServing} from "../../src/serve/describeServing.js";
import {repoRoot} from "../helpers/testModel.js";

/** The route table of the server as `cleanroom serve` and the app build it (no request reaches the core here). */
function endpointsOfTheServer() {
    return createApiApp({
        core: {} as Core, modelName: () => "model", keys: new ApiKeyRing([]), parallel: 1, keyRequired: () => false,
        allowedHosts: () => [], shutdownSignal: new AbortController().signal, cacheIdleMs: 1000
    }).endpoints;
}

function endpointsNamedIn(doc: string) {
    const text = fs.readFileSync(path.join(repoRoot, doc), "utf8");
    return new Set([...text.matchAll(/`(GET|POST|PUT|PATCH|DELETE) (\/v1\/[a-z/_-]+)`/g)].map((match) => `${match[1]} ${match[2]}`));
}

describe("the endpoints of the local API server", () => {
    it("are read from its route table: models, chat completions, completions and embeddings", () => {
        expect(endpointsOfTheServer()).toEqual(["GET /v1/models", "POST /v1/chat/completions", "POST /v1/completions", "POST /v1/embeddings"]);
    });

    it("are each named in docs/local-server.md and docs/cli.md, which name no endpoint the server lacks", () => {
        for (const doc of ["docs/local-server.md", "docs/cli.md"])
            expect([...endpointsNamedIn(doc)].sort(), doc).toEqual([...endpointsOfTheServer()].sort());
    });

    it("are all on serve's startup line, embeddings with the model that answers them or why none does", () => {
        const endpoints = endpointsOfTheServer();
        expect(describeServing({modelName: "stories260K", embeddingModelName: "bge-small", endpoints})).toBe(
            "Serving stories260K: GET /v1/models, POST /v1/chat/completions, POST /v1/completions, POST /v1/embeddings (with bge-small)");
        expect(describeServing({modelName: "stories260K", embeddingModelName: null, endpoints})).toContain(
            "POST /v1/embeddings (refused: no embedding model, see --embedding-model)");
    });
});
