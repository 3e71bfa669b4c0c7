/**
 * The line `cleanroom serve` writes to stderr once it listens: what it serves, at which endpoints
 * (from its route table, `ApiServer.endpoints`), and which model answers embeddings, or why none does.
 */
export function describeServing({modelName, embeddingModelName, endpoints}: {modelName: string, embeddingModelName: string | null, endpoints: readonly string[]}) {
    const listed = endpoints.map((endpoint) => !endpoint.endsWith("/embeddings") ? endpoint
        : embeddingModelName == null ? `${endpoint} (refused: no embedding model, see --embedding-model)` : `${endpoint} (with ${embeddingModelName})`);
    return `Serving ${modelName}: ${listed.join(", ")}`;
}
