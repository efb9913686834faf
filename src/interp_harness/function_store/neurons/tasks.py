"""The 12 intervention-mode tasks of Huang et al. (2023), from the paper's task table: a template
with one slot for a string in ⟦E⟧ and the expected next word for each filler. Templates follow the
paper's examples; the fillers are our own (at least 30 per task). A run keeps only the fillers the
model completes correctly (the paper's filter) and pairs them into (base, source) pairs with
different outputs.

The paper's table lists "verb tense" under both Verbs and Time expressions; here the second one
varies the time expression (the concept of that row) instead of the verb.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SLOT = "{x}"


@dataclass(frozen=True)
class Task:
    name: str
    concept: str  # the explanation-like description of ⟦E⟧ (used to rank neurons by similarity)
    template: str  # with one SLOT; the model's next word is the output
    fillers: tuple[tuple[str, str], ...]  # (string in ⟦E⟧, expected next word)
    paper_example: str = ""
    notes: str = field(default="", compare=False)

    def prompt(self, filler: str) -> str:
        return self.template.replace(SLOT, filler)

    def slot_chars(self, filler: str) -> tuple[int, int]:
        start = self.template.index(SLOT)
        return start, start + len(filler)


def _pairs(text: str) -> tuple[tuple[str, str], ...]:
    """`a=b; c=d` -> ((a, b), (c, d))."""
    return tuple(tuple(p.split("=", 1)) for p in (x.strip() for x in text.split(";")) if p)  # type: ignore[misc]


_PAST = "play=played; walk=walked; cook=cooked; dance=danced; paint=painted; clean=cleaned; \
watch=watched; jump=jumped; talk=talked; work=worked; study=studied; visit=visited; call=called; \
help=helped; listen=listened; travel=traveled; climb=climbed; laugh=laughed; sing=sang; swim=swam; \
run=ran; write=wrote; read=read; eat=ate; drink=drank; drive=drove; speak=spoke; sleep=slept; \
teach=taught; draw=drew; ride=rode; build=built"
_TIME = "yesterday=played; last night=played; last week=played; last year=played; \
two days ago=played; last Monday=played; last summer=played; last month=played; \
earlier today=played; three weeks ago=played; last weekend=played; a year ago=played; \
last spring=played; on Sunday last week=played; the day before yesterday=played; \
tomorrow=will; next week=will; next year=will; tonight=will; next Monday=will; \
next summer=will; in two days=will; next month=will; later today=will; in a week=will; \
next weekend=will; soon=will; the day after tomorrow=will; in three weeks=will; next spring=will"
_CAPITALS = "Canada=Ottawa; France=Paris; Germany=Berlin; Italy=Rome; Spain=Madrid; Japan=Tokyo; \
China=Beijing; Russia=Moscow; Egypt=Cairo; Greece=Athens; Portugal=Lisbon; Austria=Vienna; \
Poland=Warsaw; Norway=Oslo; Sweden=Stockholm; Finland=Helsinki; Denmark=Copenhagen; \
Ireland=Dublin; Hungary=Budapest; Kenya=Nairobi; Peru=Lima; Chile=Santiago; Cuba=Havana; \
Thailand=Bangkok; Iran=Tehran; Iraq=Baghdad; Argentina=Buenos; England=London; \
Belgium=Brussels; Turkey=Ankara; Mexico=Mexico; Indonesia=Jakarta; Vietnam=Hanoi"
_CITIES = "CN Tower=Toronto; Eiffel Tower=Paris; Colosseum=Rome; Big Ben=London; \
Brandenburg Gate=Berlin; Golden Gate Bridge=San; Space Needle=Seattle; Kremlin=Moscow; \
Sagrada Familia=Barcelona; Acropolis=Athens; Forbidden City=Beijing; Louvre=Paris; \
Empire State Building=New; Statue of Liberty=New; Tower of London=London; Vatican=Rome; \
Brooklyn Bridge=New; Hollywood sign=Los; Alamo=San; Gateway Arch=St; Burj Khalifa=Dubai; \
Sydney Opera House=Sydney; Buckingham Palace=London; Rijksmuseum=Amsterdam; Prado=Madrid; \
Hagia Sophia=Istanbul; Blue Mosque=Istanbul; Charles Bridge=Prague; Little Mermaid statue=Copenhagen; \
Willis Tower=Chicago; Pentagon=Arlington; White House=Washington; Las Ramblas=Barcelona"
_NAMES = "Alice=she; Mary=she; Emma=she; Sarah=she; Olivia=she; Sophia=she; Laura=she; \
Anna=she; Julia=she; Grace=she; Emily=she; Hannah=she; Rachel=she; Chloe=she; Lucy=she; \
John=he; James=he; Robert=he; Michael=he; David=he; William=he; Thomas=he; Daniel=he; \
Peter=he; George=he; Henry=he; Jack=he; Paul=he; Mark=he; Steven=he"
_LEADERS = "Emmanuel Macron=France; Angela Merkel=Germany; Vladimir Putin=Russia; \
Justin Trudeau=Canada; Barack Obama=the; Boris Johnson=the; Narendra Modi=India; \
Xi Jinping=China; Shinzo Abe=Japan; Recep Tayyip Erdogan=Turkey; Jair Bolsonaro=Brazil; \
Nelson Mandela=South; Fidel Castro=Cuba; Charles de Gaulle=France; Winston Churchill=the; \
Abraham Lincoln=the; Mao Zedong=China; Indira Gandhi=India; Golda Meir=Israel; \
Benjamin Netanyahu=Israel; Silvio Berlusconi=Italy; Helmut Kohl=Germany; Margaret Thatcher=the; \
Juan Peron=Argentina; Hugo Chavez=Venezuela; Francois Mitterrand=France; Jacinda Ardern=New; \
Mikhail Gorbachev=the; Volodymyr Zelensky=Ukraine; Kim Jong-un=North; George Washington=the"
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = (
    "February 1st 2020",
    "March 3rd 2021",
    "May 10th 2019",
    "July 4th 2018",
    "October 9th 2022",
)
_SV = "tree=was; car=was; house=was; dog=was; book=was; river=was; bridge=was; chair=was; \
painting=was; garden=was; building=was; mountain=was; boat=was; window=was; road=was; \
trees=were; cars=were; houses=were; dogs=were; books=were; rivers=were; bridges=were; \
chairs=were; paintings=were; gardens=were; buildings=were; mountains=were; boats=were; \
windows=were; roads=were"
_NP = "cat=it; dog=it; horse=it; bird=it; rabbit=it; goat=it; sheep=it; mouse=it; pig=it; \
cow=it; fox=it; duck=it; parrot=it; hamster=it; lamb=it; cats=they; dogs=they; horses=they; \
birds=they; rabbits=they; goats=they; mice=they; pigs=they; cows=they; foxes=they; ducks=they; \
parrots=they; hamsters=they; lambs=they; kittens=they"
_INTRANS = "swim=.; sleep=.; arrive=.; laugh=.; cry=.; smile=.; wait=.; fall=.; die=.; \
sneeze=.; cough=.; yawn=.; shiver=.; kneel=.; exist=.; \
eat=<obj>; make=<obj>; buy=<obj>; take=<obj>; bring=<obj>; hold=<obj>; carry=<obj>; \
need=<obj>; want=<obj>; love=<obj>; hate=<obj>; find=<obj>; build=<obj>; sell=<obj>; use=<obj>"
_MILES = tuple((str(n), str(int(n * 1.609344))) for n in range(2, 40))
_YEARS = tuple(
    (str(y), "after" if y > 1935 else "before") for y in (*range(1915, 1931), *range(1940, 1956))
)

TASKS: dict[str, Task] = {
    t.name: t
    for t in (
        Task("unit_conversion", 'numbers of miles, such as "2", "10"',
             "The hiking trail stretches for {x} miles (", _MILES,
             "The hiking trail stretches for 2 miles (3.2"),
        Task("numerical_comparison", 'years and numbers, such as "1937", "1950"',
             "The war was in 1935 and he was born in {x}, which was a few years", _YEARS,
             "The war was in 1935 and he was born in 1937, which was a few years after"),
        Task("verb_tense", 'verbs in the present tense, such as "play", "walk"',
             "They {x} every day, so I believe last night they also", _pairs(_PAST),
             "They play piano every day, so I believe last night they also played"),
        Task("transitive_intransitive", 'verbs, such as "live", "swim", "eat"',
             "We live. They have pets. You leave. I stand. It happens. We {x}", _pairs(_INTRANS),
             "We live. They have pets. You leave. I stand. It happens. We swim .",
             notes="<obj>: any continuation other than '.' (a transitive verb takes an object)"),
        Task("capital_retrieval", 'names of countries, such as "Canada", "France"',
             "The capital of {x} is", _pairs(_CAPITALS), "The capital of Canada is Ottawa"),
        Task("city_retrieval", 'landmarks and famous buildings, such as "CN Tower"',
             "The {x} is located in the city of", _pairs(_CITIES),
             "The CN Tower is located in the city of Toronto"),
        Task("gender_agreement", 'first names of people, such as "Alice", "John"',
             "{x} didn't come to the party because", _pairs(_NAMES),
             "Alice didn't come because she"),
        Task("position_retrieval", 'names of politicians, such as "Kay Ivey"',
             "{x} was the leader of", _pairs(_LEADERS),
             "Kay Ivey was the governor of Alabama"),
        Task("time_verb_tense", 'time expressions, such as "yesterday", "next week"',
             "I play piano every day, and {x} I", _pairs(_TIME),
             "They play piano every day, so I believe last night they also played"),
        Task("next_day", 'days of the week, such as "Wednesday"',
             "Yesterday was {x}. Today is",
             tuple((f"{d}, {m}", _DAYS[(i + 1) % 7]) for i, d in enumerate(_DAYS) for m in _MONTHS),
             "Yesterday was Wednesday, February 1st 2020. Today is Thursday"),
        Task("subject_verb_agreement", 'plural nouns, such as "trees", "cars"',
             "We saw the {x}, which", _pairs(_SV), "We saw the trees, which were"),
        Task("noun_pronoun_agreement", 'plural nouns, such as "cats", "dogs"',
             "The {x} ran away because", _pairs(_NP), "The cats ran away because they"),
    )
}  # fmt: skip


def matches(generated: str, expected: str) -> bool:
    """The model's next token(s) give the expected word: its first token is a prefix of the word
    (at least 3 characters, or the whole word), `<obj>` meaning anything but '.'."""
    g = generated.strip()
    if expected == "<obj>":
        return bool(g) and not g.startswith(".")
    if not g:
        return False
    return expected.startswith(g) and (len(g) >= 3 or g == expected) or g == expected
