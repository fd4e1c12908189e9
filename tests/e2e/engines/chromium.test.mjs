// The browser suite in chromium (see ../lib/suite.mjs).
import { suite } from '../lib/suite.mjs';

await suite('chromium');
