import type * as z from "zod";
import type {WireError} from "../errors.js";
import {coreCalls, type CoreCalls} from "./calls.js";
import {coreEvents, type CoreEvents} from "./events.js";
import type * as schemas from "./schemas.js";

export type ApiMethod = keyof CoreCalls;
/** What a caller passes (before defaults are applied). */
export type ApiInput<M extends ApiMethod> = z.input<CoreCalls[M]["input"]>;
/** What a handler receives, after validation. */
export type ApiParsedInput<M extends ApiMethod> = z.output<CoreCalls[M]["input"]>;
export type ApiOutput<M extends ApiMethod> = z.infer<CoreCalls[M]["output"]>;

export type ApiEvent = keyof CoreEvents;
export type ApiEventPayload<E extends ApiEvent> = z.infer<CoreEvents[E]>;

/** How a call's outcome crosses any transport: errors travel as data, never as thrown objects. */
export type CallResult<T = unknown> = {ok: true, value: T} | {ok: false, error: WireError};

export type ApiHandlers = {[M in ApiMethod]: (input: ApiParsedInput<M>) => Promise<ApiOutput<M>>};

export type AppSettings = z.infer<typeof schemas.AppSettingsSchema>;
export type GpuSetting = z.infer<typeof schemas.GpuSettingSchema>;
export type GpuBackend = z.infer<typeof schemas.GpuBackendSchema>;
export type KvReadBack = z.infer<typeof schemas.KvReadBackSchema>;
export type ModelStatus = z.infer<typeof schemas.ModelStatusSchema>;
export type CoreStatus = z.infer<typeof schemas.CoreStatusSchema>;
export type IsolationReport = z.infer<typeof schemas.IsolationReportSchema>;
export type TurnResult = z.infer<typeof schemas.TurnResultSchema>;
export type CanaryCounts = z.infer<typeof schemas.CanaryCountsSchema>;
export type TurnRoute = z.infer<typeof schemas.TurnRouteSchema>;
export type ModelLibrary = z.infer<typeof schemas.ModelLibrarySchema>;
export type InstalledModel = z.infer<typeof schemas.InstalledModelSchema>;
export type CatalogModel = z.infer<typeof schemas.CatalogModelSchema>;
export type DetectedModels = z.infer<typeof schemas.DetectedModelsSchema>;
export type DownloadProgressEvent = z.infer<typeof schemas.DownloadProgressEventSchema>;

export const apiMethods = Object.keys(coreCalls) as ApiMethod[];
export const apiEvents = Object.keys(coreEvents) as ApiEvent[];

export function isApiMethod(name: unknown): name is ApiMethod {
    return typeof name === "string" && Object.hasOwn(coreCalls, name);
}

export function isApiEvent(name: unknown): name is ApiEvent {
    return typeof name === "string" && Object.hasOwn(coreEvents, name);
}
export type ConversationExportFile = z.infer<typeof schemas.ConversationExportFileSchema>;
export type ExportFormat = z.infer<typeof schemas.ExportFormatSchema>;
export type ModelLoadStep = z.infer<typeof schemas.ModelLoadStepSchema>;
