import * as z from "zod";

/**
 * The ranges of the values a person gives the core, one schema each: the RPC validates calls
 * with them, the conversation settings are built from them, and the CLI checks its flags with
 * them, so that every front end refuses the same values for the same reason.
 */

/** Reply budget in tokens. */
export const MaxTokensSchema = z.number().int().min(1).max(32_768);

/** Sampling temperature; 0 means greedy (deterministic) decoding. */
export const TemperatureSchema = z.number().min(0).max(2);

/** Sampling seed: the same seed gives the same reply. */
export const SeedSchema = z.number().int().min(0).max(2 ** 32 - 1);

/** Threads for generation (llama.cpp uses at most one per core; more only slows it down). */
export const ThreadsSchema = z.number().int().min(1).max(256);

/** Tokens per conversation context (llama.cpp rounds it up to a multiple of 256). */
export const ContextSizeSchema = z.number().int().min(128).max(131_072);

/** The longest message a user can send, in UTF-16 units (`String.length`): the app refuses longer before sending. */
export const maxMessageTextLength = 100_000;

/**
 * 100000 as "100,000", as `toLocaleString("en-US")` writes it, without its first call's start of
 * ICU's number formatting: about 10 ms of CPU in every process that loads this file (#25 item 1).
 */
function groupThousands(count: number) {
    return String(count).replace(/\B(?=(\d{3})+$)/g, ",");
}

/** What a user sends as one message. */
export const MessageTextSchema = z.string()
    .min(1, "a message cannot be empty")
    .max(maxMessageTextLength, `a message can be at most ${groupThousands(maxMessageTextLength)} characters`)
    .refine((text) => text.trim() !== "", "a message cannot be only whitespace");

/** A cloud endpoint's context limit in tokens (prompt + reply), when given rather than asked of the endpoint. */
export const CloudContextLimitSchema = z.number().int().min(1).max(100_000_000);

/** Words to search for in titles and message text (`conversations.search`, `cleanroom conversations search`). */
export const SearchTextSchema = z.string().trim().min(1, "a search needs a word").max(500);

/** The fewest characters (code points) a new passphrase has, in the app and the CLI alike. */
export const passphraseMinimumLength = 8;

/** A passphrase given to open the database (`app.unlock`, the current one in `app.setPassphrase`). */
export const GivenPassphraseSchema = z.string().min(1).max(1024);

/** A new passphrase (`app.setPassphrase`). */
export const NewPassphraseSchema = z.string().max(1024)
    .refine((text) => [...text].length >= passphraseMinimumLength, `a passphrase has at least ${passphraseMinimumLength} characters`);

/** Minutes of idleness before the app locks (with a passphrase); 0 never. At most a week. */
export const LockAfterMinutesSchema = z.number().int().min(0).max(7 * 24 * 60);

/** The idle time before the app locks, unless changed in Settings (or `--lock-after` in web mode). */
export const defaultLockAfterMinutes = 15;

/** The largest resume snapshot saved, in MiB (a conversation's KV state): at least 1 MiB, at most 64 GiB. */
export const ResumeSnapshotMaxMiBSchema = z.number().int().min(1).max(65_536);

/** Unless changed: 4,000 tokens of a 1B model's f16 KV cache fit; a 7B model's long conversation resumes by evaluating again. */
export const defaultResumeSnapshotMaxMiB = 512;

/** The longest "Never send these" phrase, in characters. */
export const maxNeverSendPhraseLength = 200;

/** The most phrases the "Never send these" list holds. */
export const maxNeverSendPhrases = 500;

/** One word or phrase of the "Never send these" list. */
export const NeverSendPhraseSchema = z.string().trim().min(1, "a phrase cannot be empty")
    .max(maxNeverSendPhraseLength, `a phrase can be at most ${maxNeverSendPhraseLength} characters`);

/** The user's "Never send these" list: words and phrases a cloud request must not carry. */
export const NeverSendListSchema = z.array(NeverSendPhraseSchema).max(maxNeverSendPhrases);

/**
 * Most bytes one `attachments.uploadChunk` carries (#23): 72 KiB, 98,304 characters of base64,
 * under the 100,000 characters any string of a call may hold (the RPC fuzz test's rule), and
 * far within the WebSocket's message limit (`maxRpcMessageBytes`).
 */
export const maxUploadChunkBytes = 72 * 1024;
