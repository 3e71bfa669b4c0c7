import type {CloudTurnResult} from "../../common/types.js";
import type {CloudTurnService, CloudTurnServiceOptions} from "./CloudTurnService.js";
import type {SendMessageCallbacks, TurnRequest} from "./types.js";

/**
 * The cloud turns of one set of conversations, their service loaded at its first use (#25 item 1):
 * a process that never sends a cloud turn never parses the cloud client, the canary scanner, the
 * fingerprints with their table of look-alike letters, or the secret scanner.
 * test/integration/startupCost.test.ts checks that a local turn loads none of them.
 */
export class OnDemandCloudTurns {
    private readonly _options: CloudTurnServiceOptions;
    private _service: Promise<CloudTurnService> | null = null;

    public constructor(options: CloudTurnServiceOptions) {
        this._options = options;
        // Where cloud turns are expected (the fallback on, an endpoint set), the service (and its
        // secret scanner's warm-up) is loaded now rather than by the first turn.
        const cloud = options.settings.get();
        if (cloud.fallback && cloud.endpoint != null)
            void this._load().catch(() => undefined);
    }

    /** See `CloudTurnService.run`. */
    public async run(request: TurnRequest, routeReason: string, callbacks: SendMessageCallbacks = {}, create?: () => void): Promise<CloudTurnResult> {
        return await (await this._load()).run(request, routeReason, callbacks, create);
    }

    private _load(): Promise<CloudTurnService> {
        this._service ??= import("./CloudTurnService.js").then(
            ({CloudTurnService}) => new CloudTurnService(this._options),
            (error: unknown) => {
                this._service = null; // a failed load is tried again by the next turn
                throw error;
            }
        );
        return this._service;
    }
}
