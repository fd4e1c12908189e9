//! The npm typings' `Program` union is written by hand in `src/types.d.ts` (wasm-bindgen cannot
//! derive a string union from the registry): it must name exactly the registry's programs, in its
//! order, so a new program's id reaches TypeScript users or this test names what is missing.

use estimator::programs::Program;

#[test]
fn the_program_union_names_every_registered_program() {
    let typings = include_str!("../src/types.d.ts");
    let line = typings
        .lines()
        .find(|l| l.starts_with("export type Program ="))
        .expect("types.d.ts declares `export type Program = …;`");
    let union: Vec<&str> = line["export type Program =".len()..]
        .trim()
        .trim_end_matches(';')
        .split('|')
        .map(|id| id.trim().trim_matches('"'))
        .collect();
    assert_eq!(
        union,
        Program::NAMES,
        "types.d.ts's Program union against the registry"
    );
}
