Mi hermano lleva pan fresco después del trabajo.
El médico lleva las cartas después del trabajo.
Nosotros necesitamos dos boletos todas las mañanas.
Nuestros vecinos leen el periódico todas las mañanas.
Mi abuela compra un libro nuevo después del trabajo.
Mi abuela necesita pan fresco todas las mañanas.
Los niños leen el periódico antes de la cena.
Mi hermano encuentra una manta caliente en el mercado.
Mi hermano necesita el periódico todas las mañanas.
Nuestros vecinos necesitan pan fresco todas las mañanas.
Los niños leen dos boletos en el mercado.
Mi hermano lleva el periódico antes de la cena.
El médico lleva pan fresco después del trabajo.
El médico necesita pan fresco después del trabajo.
Nuestros vecinos encuentran pan fresco en el mercado.
Los niños encuentran el periódico los domingos.
Nuestros vecinos encuentran un libro nuevo antes de la cena.
Mi hermano lleva un libro nuevo todas las mañanas.
¿Dónde compra el médico pan fresco?
Los niños están leyendo un libro nuevo en la escuela.
¿Está abierta la estación de tren los domingos?
Mi abuela no necesita dos boletos.
La tienda cierra después de la cena.
Nuestros vecinos encontraron las cartas en el jardín.
¿Cuánto cuesta una manta caliente?
No entendemos el periódico.
Mi hermano vive cerca del mercado.
Hace frío en la ciudad todas las mañanas.
El comité aprobó el nuevo presupuesto ayer.
Los volcanes liberan gas y ceniza a la atmósfera.
Ella reparó la bicicleta con una llave prestada.
Las elecciones se celebrarán en noviembre.
La orquesta ensayó en silencio durante horas.
Los lobos cazan en manada durante el invierno.
La actualización del programa corrigió varios errores.
La fotosíntesis convierte la luz en energía química.
El abuelo plantó olivos en la colina.
Un viento fuerte derribó la cerca.
El museo exhibe cerámica antigua.
Por favor, envíe el formulario antes del viernes.
