#!/usr/bin/env -S npx tsx
import {cleanroomProgram} from "./cleanroomProgram.js";
import {runCliProgram} from "./runCliProgram.js";

await runCliProgram(cleanroomProgram);
