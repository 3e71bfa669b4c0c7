import path from "node:path";
import type {Locator, Page} from "playwright-core";
import {afterAll, beforeAll} from "vitest";
import {SamplingSettingsSchema} from "../../src/core/common/types.js";
import {ConversationStore} from "../../src/core/node/database/ConversationStore.js";
import {openDatabase} from "../../src/core/node/database/openDatabase.js";
import {openE2eApp, type E2eApp} from "./e2eApp.js";
import {tempDir} from "./tempCore.js";

// The Isolation panel's Backend card in web mode, as gpuPanel.e2e.test.ts (Vulkan, run alone) and gpuPanelCpu.e2e.test.ts (--gpu off) open it.

export const isolation = (page: Page) => page.getByRole("region", {name: "Isolation"});
const backendCard = (page: Page) => isolation(page).getByLabel("Backend", {exact: true});
export const text = async (locator: Locator) => (await locator.innerText()).replace(/\s+/g, " ");

/**
 * The conversation the app opens on (the only one, so the latest): its replies stop after a few
 * tokens, as many as a turn needs to leave a session whose scrub the panel shows. On `--gpu vulkan`
 * under CI (llvmpipe, in software) each token of a reply costs, and the default budget is 512.
 */
export const shortReplies = {title: "Short replies", maxTokens: 16};

/**
 * Web mode on the test model with `--gpu <gpu>`. GGML_VK_VISIBLE_DEVICES is removed (a test
 * process that loaded Vulkan set it), so web mode makes its own device choice, as a user's would.
 */
function openGpuApp(modelPath: string, label: string, gpu: string, nodeArgs: string[]) {
    const home = tempDir(`e2e-gpu-${label}`);
    const db = openDatabase(path.join(home, "e2e.db"), {key: {}});
    new ConversationStore(db).create({title: shortReplies.title, settings: {sampling: SamplingSettingsSchema.parse({maxTokens: shortReplies.maxTokens})}});
    db.close();
    return openE2eApp({
        // 512 tokens: a turn's prompt and its short reply fit.
        label, home, args: ["--model", modelPath, "--gpu", gpu], contextSize: 512, nodeArgs, screenshotPrefix: `gpu-${label}-`,
        env: {GGML_VK_VISIBLE_DEVICES: undefined, CLEANROOM_GPU: undefined}
    });
}

/** The app for one describe block: opened before its tests, closed after them. */
export function useGpuApp(modelPath: string, label: string, gpu: string, nodeArgs: string[] = []): () => E2eApp {
    let app: E2eApp | undefined;
    beforeAll(async () => {
        app = await openGpuApp(modelPath, label, gpu, nodeArgs);
    }, 300_000);
    afterAll(async () => {
        await app?.close();
    });
    return () => app!;
}

/** Opens the page and returns the Backend card and its text, whitespace collapsed. */
export async function showBackend(app: E2eApp): Promise<{card: Locator, shown: string}> {
    await app.page.goto(app.web.url);
    const card = backendCard(app.page);
    await card.waitFor();
    return {card, shown: await text(card)};
}
