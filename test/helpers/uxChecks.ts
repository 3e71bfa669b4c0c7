import fs from "node:fs";
import {createRequire} from "node:module";
import type {Page} from "playwright-core";

const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export type AxeViolation = {id: string, impact: string | null, help: string, targets: string[]};

/**
 * Runs axe-core in the page (evaluated over the DevTools protocol, so the app's CSP stays as it is)
 * and returns the violations of impact serious or critical, each with the elements it names.
 */
export async function seriousAxeViolations(page: Page): Promise<AxeViolation[]> {
    await page.evaluate(axeSource);
    const violations = await page.evaluate(async () => {
        type AxeResult = {violations: Array<{id: string, impact: string | null, help: string, nodes: Array<{target: unknown[]}>}>};
        const axe = (window as unknown as {axe: {run(context: Document, options: object): Promise<AxeResult>}}).axe;
        const result = await axe.run(document, {resultTypes: ["violations"]});
        return result.violations.map((violation) => ({
            id: violation.id, impact: violation.impact, help: violation.help,
            targets: violation.nodes.map((node) => node.target.map(String).join(" "))
        }));
    });
    return violations.filter((violation) => violation.impact === "serious" || violation.impact === "critical");
}

export type Box = {name: string, x: number, y: number, width: number, height: number};

/** The boxes of the elements a selector finds that are displayed, named by their label, role or text. */
export async function visibleBoxes(page: Page, selector: string): Promise<Box[]> {
    return await page.evaluate((query) => [...document.querySelectorAll(query)].flatMap((element) => {
        const rect = element.getBoundingClientRect();
        const style = getComputedStyle(element);
        if (rect.width === 0 || rect.height === 0 || style.visibility === "hidden" || style.display === "none")
            return [];
        const name = element.getAttribute("aria-label") ?? element.id ?? "";
        return [{name: `${element.tagName.toLowerCase()}${name !== "" ? `[${name}]` : ""} ${(element.textContent ?? "").trim().slice(0, 30)}`,
            x: rect.x, y: rect.y, width: rect.width, height: rect.height}];
    }), selector);
}

/** Pairs of boxes that overlap by more than a pixel each way. */
export function overlapping(boxes: Box[]): Array<[string, string]> {
    const pairs: Array<[string, string]> = [];
    for (const [index, a] of boxes.entries())
        for (const b of boxes.slice(index + 1)) {
            const overlapX = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
            const overlapY = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
            if (overlapX > 1 && overlapY > 1)
                pairs.push([a.name, b.name]);
        }
    return pairs;
}

/** Boxes that reach outside the viewport horizontally (or past its bottom). */
export function outsideViewport(boxes: Box[], width: number, height: number): string[] {
    return boxes.filter((box) => box.x < -1 || box.x + box.width > width + 1 || box.y + box.height > height + 1).map((box) => box.name);
}

/**
 * Presses Tab up to `presses` times and returns, for each element that took focus, its name and whether
 * a focus ring is drawn (an outline or a box shadow).
 */
export async function tabThrough(page: Page, presses: number): Promise<Array<{name: string, ring: boolean}>> {
    const seen: Array<{name: string, ring: boolean}> = [];
    for (let press = 0; press < presses; press++) {
        await page.keyboard.press("Tab");
        seen.push(await page.evaluate(() => {
            const element = document.activeElement as HTMLElement | null;
            if (element == null || element === document.body)
                return {name: "body", ring: true};
            const style = getComputedStyle(element);
            const ring = (style.outlineStyle !== "none" && parseFloat(style.outlineWidth) > 0) || style.boxShadow !== "none";
            const label = element.getAttribute("aria-label") ?? element.textContent?.trim().slice(0, 40) ?? "";
            return {name: `${element.tagName.toLowerCase()} ${label}`, ring};
        }));
    }
    return seen;
}
