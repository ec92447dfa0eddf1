// AgentDojo, scripted through the Gate (docs/agentdojo.md). `npm run bench -- agentdojo
// [--suite-dir DIR]… [--out FILE] [--annotations FILE]`; the harness is in bench/agentdojo/.
import { cli } from "./agentdojo/main.js";

await cli(process.argv.slice(2));
