import {GgufValueType, writeGguf, type GgufTensor, type GgufValue} from "./GgufFile.js";

/**
 * A tiny BERT-architecture embedding model (llama.cpp's `LLM_ARCH_BERT`: an encoder, no KV cache),
 * with a WordPiece ("bert") vocabulary made here. Its weights are chosen, not random, so that its
 * vectors mean something a test can predict: every word of a synonym group has the same token
 * embedding (its own direction), every other token embeds to zero, and the layers pass the input
 * through unchanged (attention and feed-forward outputs are zero, the norms are identities up to
 * scale). With mean pooling, a text's vector is the mix of its groups: "automobile" is as close to
 * "car" as "car" is, a match that BM25, comparing words, cannot make.
 */

export type SyntheticBertOptions = {
    /** Words that mean the same, one group per direction. Defaults to `defaultSynonymGroups`. */
    synonymGroups?: readonly (readonly string[])[],
    /** Trained context (positions). Defaults to `512`. */
    contextLength?: number
};

export const defaultSynonymGroups: readonly (readonly string[])[] = [
    ["car", "automobile", "vehicle", "sedan"],
    ["invoice", "bill", "receipt"],
    ["ocean", "sea", "marine"],
    ["doctor", "physician", "clinician"],
    ["dog", "puppy", "canine"],
    ["money", "cash", "funds"]
];

const specialTokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] as const;
const [padId, unknownId, clsId, separatorId, maskId] = [0, 1, 2, 3, 4];
const wordStart = "\u2581"; // llama.cpp's WPM tokenizer marks a word's first piece with it (for "##" pieces: no mark)
const letters = "abcdefghijklmnopqrstuvwxyz0123456789".split("");
const heads = 2;
const feedForward = 64;
const layers = 2;
const tokenTypeNormal = 1;
const tokenTypeControl = 3;
const poolingMean = 1;

/** Writes the model to `outPath`; returns its embedding size. */
export function makeSyntheticBert(outPath: string, {synonymGroups = defaultSynonymGroups, contextLength = 512}: SyntheticBertOptions = {}): number {
    // Two dimensions a group (+1, -1: zero mean, so that the layer norms keep its direction). A layer norm
    // scales every non-zero token to one length, so [CLS], [SEP] and words of no group embed to zero: a
    // text's vector is then its groups alone (a text of none has the zero vector, similar to nothing).
    const embedding = Math.max(16, Math.ceil(synonymGroups.length * 2 / 16) * 16);
    const tokens: string[] = [...specialTokens];
    const tokenTypes: number[] = specialTokens.map(() => tokenTypeControl);
    const directions = new Map<number, number>(); // token id → dimension pair index
    for (const [group, words] of synonymGroups.entries())
        for (const word of words) {
            if (!/^[a-z0-9]+$/.test(word))
                throw new Error(`"${word}": synonym words are lowercase letters and digits`);
            directions.set(tokens.length, group);
            tokens.push(wordStart + word);
            tokenTypes.push(tokenTypeNormal);
        }
    // Any other word is spelled in letters (a first piece, then continuation pieces), which embed to zero.
    for (const letter of letters)
        for (const piece of [wordStart + letter, letter])
            if (!tokens.includes(piece)) {
                tokens.push(piece);
                tokenTypes.push(tokenTypeNormal);
            }
    const vocab = tokens.length;

    const u32 = (value: number): GgufValue => ({type: GgufValueType.U32, value});
    const metadata = new Map<string, GgufValue>([
        ["general.architecture", {type: GgufValueType.String, value: "bert"}],
        ["general.name", {type: GgufValueType.String, value: "cleanroom-test-bert"}],
        ["general.file_type", u32(0)],
        ["bert.context_length", u32(contextLength)],
        ["bert.embedding_length", u32(embedding)],
        ["bert.block_count", u32(layers)],
        ["bert.feed_forward_length", u32(feedForward)],
        ["bert.attention.head_count", u32(heads)],
        ["bert.attention.layer_norm_epsilon", {type: GgufValueType.F32, value: 1e-12}],
        ["bert.attention.causal", {type: GgufValueType.Bool, value: false}],
        ["bert.pooling_type", u32(poolingMean)],
        ["tokenizer.ggml.model", {type: GgufValueType.String, value: "bert"}],
        ["tokenizer.ggml.tokens", {type: GgufValueType.Array, itemType: GgufValueType.String, items: tokens}],
        ["tokenizer.ggml.token_type", {type: GgufValueType.Array, itemType: GgufValueType.I32, items: tokenTypes}],
        ["tokenizer.ggml.token_type_count", u32(2)],
        ["tokenizer.ggml.bos_token_id", u32(clsId)],
        ["tokenizer.ggml.cls_token_id", u32(clsId)],
        ["tokenizer.ggml.seperator_token_id", u32(separatorId)],
        ["tokenizer.ggml.unknown_token_id", u32(unknownId)],
        ["tokenizer.ggml.padding_token_id", u32(padId)],
        ["tokenizer.ggml.mask_token_id", u32(maskId)],
        ["tokenizer.ggml.add_bos_token", {type: GgufValueType.Bool, value: true}],
        ["tokenizer.ggml.add_sep_token", {type: GgufValueType.Bool, value: true}],
        ["tokenizer.ggml.normalizer.lowercase", {type: GgufValueType.Bool, value: true}]
    ]);

    const tokenEmbedding = new Float32Array(embedding * vocab);
    for (const [token, group] of directions) {
        tokenEmbedding[token * embedding + group * 2] = 1;
        tokenEmbedding[token * embedding + group * 2 + 1] = -1;
    }

    const tensors: GgufTensor[] = [
        f32("token_embd.weight", [embedding, vocab], tokenEmbedding),
        zeros("token_types.weight", [embedding, 2]),
        zeros("position_embd.weight", [embedding, contextLength]),
        ones("token_embd_norm.weight", embedding),
        zeros("token_embd_norm.bias", [embedding])
    ];
    for (let layer = 0; layer < layers; layer++) {
        const block = `blk.${layer}`;
        tensors.push(
            f32(`${block}.attn_q.weight`, [embedding, embedding], patterned(embedding * embedding, layer * 3 + 1)),
            zeros(`${block}.attn_q.bias`, [embedding]),
            f32(`${block}.attn_k.weight`, [embedding, embedding], patterned(embedding * embedding, layer * 3 + 2)),
            zeros(`${block}.attn_k.bias`, [embedding]),
            f32(`${block}.attn_v.weight`, [embedding, embedding], patterned(embedding * embedding, layer * 3 + 3)),
            zeros(`${block}.attn_v.bias`, [embedding]),
            // Zero outputs: each layer adds nothing to its input, so the token embeddings come through.
            zeros(`${block}.attn_output.weight`, [embedding, embedding]),
            zeros(`${block}.attn_output.bias`, [embedding]),
            ones(`${block}.attn_output_norm.weight`, embedding),
            zeros(`${block}.attn_output_norm.bias`, [embedding]),
            f32(`${block}.ffn_up.weight`, [embedding, feedForward], patterned(embedding * feedForward, layer + 7)),
            zeros(`${block}.ffn_up.bias`, [feedForward]),
            zeros(`${block}.ffn_down.weight`, [feedForward, embedding]),
            zeros(`${block}.ffn_down.bias`, [embedding]),
            ones(`${block}.layer_output_norm.weight`, embedding),
            zeros(`${block}.layer_output_norm.bias`, [embedding])
        );
    }
    writeGguf(outPath, metadata, tensors);
    return embedding;
}

function f32(name: string, dims: number[], values: Float32Array): GgufTensor {
    return {name, dims, ggmlType: 0, data: Buffer.from(values.buffer, values.byteOffset, values.byteLength)};
}

function zeros(name: string, dims: number[]): GgufTensor {
    return f32(name, dims, new Float32Array(dims.reduce((a, b) => a * b, 1)));
}

function ones(name: string, size: number): GgufTensor {
    return f32(name, [size], new Float32Array(size).fill(1));
}

/** Deterministic small values (no randomness: the same file every time). */
function patterned(count: number, seed: number): Float32Array {
    return Float32Array.from({length: count}, (_, index) => Math.sin((index + 1) * seed * 0.37) * 0.05);
}
