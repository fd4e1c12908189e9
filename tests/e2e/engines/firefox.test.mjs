// The browser suite in firefox (see ../lib/suite.mjs).
import { suite } from '../lib/suite.mjs';

await suite('firefox');
